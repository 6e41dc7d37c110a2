/*
 * gqp_shared.c -- the one source of the gqp_shared target (libgqp.so):
 * the library's code is the static libgqp.a linked whole (see
 * CMakeLists.txt), so nothing is defined here.
 */
typedef int gqp_shared_translation_unit;
