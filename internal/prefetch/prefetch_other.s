//go:build !amd64 && !arm64

#include "textflag.h"

// func Line(p unsafe.Pointer): no prefetch instruction used here.
TEXT ·Line(SB), NOSPLIT, $0-8
	RET
