#include "line_buffer.h"

namespace braid::run {

void LineBuffer::append(std::string_view data, const Emit& emit) {
  while (!data.empty()) {
    const size_t nl = data.find('\n');
    const std::string_view piece = data.substr(0, nl);  // whole rest when no '\n'
    const size_t room = maxLine_ - pending_.size();
    if (piece.size() >= room && (nl == std::string_view::npos || piece.size() > room)) {
      // The line reaches maxLine before its end: emit a full piece now.
      pending_.append(piece.substr(0, room));
      emit(pending_);
      pending_.clear();
      data.remove_prefix(room);
      continue;
    }
    if (nl == std::string_view::npos) {
      pending_.append(piece);
      return;
    }
    if (pending_.empty()) {
      emit(piece);
    } else {
      pending_.append(piece);
      emit(pending_);
      pending_.clear();
    }
    data.remove_prefix(nl + 1);
  }
}

void LineBuffer::finish(const Emit& emit) {
  if (!pending_.empty()) {
    emit(pending_);
    pending_.clear();
  }
}

}  // namespace braid::run
