//===- TestTarget.h - A second target, to test the registry ----*- C++ -*-===//

#ifndef LOOM_TEST_LIB_TARGET_TESTTARGET_H
#define LOOM_TEST_LIB_TARGET_TESTTARGET_H

namespace loom::test {

/// Registers the "test" target and its option --test-target-banner.
void registerTestTarget();

} // namespace loom::test

#endif // LOOM_TEST_LIB_TARGET_TESTTARGET_H
