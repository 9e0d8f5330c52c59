#ifndef SHUTTERPIPE_CZLIB_SHIM_H
#define SHUTTERPIPE_CZLIB_SHIM_H
// zlib: the deflate streams and CRCs of the PNG tiles the web page shows at 100 %.
#include <zlib.h>
#endif
