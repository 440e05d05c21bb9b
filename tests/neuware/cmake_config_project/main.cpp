// The cmake_project program, built with the umbrella headers DIOPI includes (cnnl_extra.h, cnmlrt.h) first.
#include <cnmlrt.h>
#include <cnnl_extra.h>

#include "../cmake_project/main.cpp"
