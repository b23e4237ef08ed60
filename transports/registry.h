// Transports register themselves with one declaration each:
//   BRAID_REGISTER_TRANSPORT(tcp, [](const Options& o, std::unique_ptr<Transport>* t) {...});
// The communicator asks the registry by name (BRAID_TRANSPORT or its own choice).
// A factory may fail with NotSupported and a reason (e.g. "no RDMA device"), which
// braid-info prints.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transports/transport.h"

namespace braid::transport {

using Factory = std::function<Status(const Options&, std::unique_ptr<Transport>*)>;

void registerTransport(const char* name, Factory factory);
std::vector<std::string> registeredTransports();
Status createTransport(const std::string& name, const Options& options,
                       std::unique_ptr<Transport>* out);

struct Registrar {
  Registrar(const char* name, Factory factory) { registerTransport(name, std::move(factory)); }
};

}  // namespace braid::transport

#define BRAID_REGISTER_TRANSPORT(ident, factory) \
  static ::braid::transport::Registrar braid_transport_registrar_##ident(#ident, factory)
