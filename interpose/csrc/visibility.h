/*
 * visibility.h: which of the library's symbols other objects see. The
 * preload library exports the MPI entry points (MF_EXPORT) and nothing
 * else of its own: MF_HIDDEN keeps a function or variable shared between
 * its files out of the application's namespace (and off the PLT), also
 * where a file is compiled without -fvisibility=hidden (the Go package,
 * the clock's test program).
 */
#ifndef MPIFLOW_VISIBILITY_H
#define MPIFLOW_VISIBILITY_H

#define MF_HIDDEN __attribute__((visibility("hidden")))
#define MF_EXPORT __attribute__((visibility("default")))

#endif
