// Package otf2dl loads the OTF2 library (libopen-trace-format2) with
// dlopen when it is first needed, so that mpiflow does not link it: every
// command runs where OTF2 is not installed, and only OTF2 export and import
// need it.
//
// Its C side (otf2dl.h, otf2dl.c) defines mf_OTF2_X for each OTF2 function
// OTF2_X that mpiflow uses, with the same parameters, calling the loaded
// library. The cgo code of export/otf2 and importer/otf2 includes otf2dl.h
// and calls those; their Go code calls Load first.
package otf2dl

// Library is the OTF2 library loaded, by its soname (OTF2 3.x).
const Library = "libopen-trace-format2.so.10"

// Package is the Debian package that installs Library.
const Package = "libopen-trace-format2-10"

// EnvLib is the environment variable that gives the path of the OTF2
// library to load instead of searching for Library.
const EnvLib = "MPIFLOW_OTF2_LIB"
