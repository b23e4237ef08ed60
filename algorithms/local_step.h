// Running a schedule's local steps (copy, reduce, divide, scale, encode,
// decode):
// the one place that turns them into kernel calls, shared by the executor and
// the schedule simulator so both compute exactly the same bytes.
#pragma once

#include "algorithms/schedule.h"

namespace braid::algo {

// True for the steps runLocalStep() runs (everything but send / receive).
bool isLocalStep(StepKind kind);

// Runs a local step whose regions resolve to src and dst (the addresses of
// step.src and step.dst). Regions were checked by Schedule::validate or come
// from a generator that guarantees them.
void runLocalStep(const Step& step, const char* src, char* dst);

}  // namespace braid::algo
