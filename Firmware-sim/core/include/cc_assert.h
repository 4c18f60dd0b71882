/*
 * CameraControl firmware core: checks of the core's own invariants.
 *
 * Bad outside input (bytes from the wire, requests) never reaches an
 * assertion: it returns an error. CC_ASSERT is for bugs only. It traps in
 * host builds without NDEBUG and compiles to nothing otherwise, so it never
 * pulls libc I/O into a firmware image.
 */
#ifndef CC_ASSERT_H
#define CC_ASSERT_H

#if defined(CC_HOST_BUILD) && !defined(NDEBUG) && defined(__GNUC__)
#define CC_ASSERT(cond) do { if (!(cond)) { __builtin_trap(); } } while (0)
#else
#define CC_ASSERT(cond) do { (void)sizeof(cond); } while (0)
#endif

#endif /* CC_ASSERT_H */
