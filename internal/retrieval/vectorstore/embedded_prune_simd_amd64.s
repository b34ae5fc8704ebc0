//go:build amd64 && !purego

#include "textflag.h"

// func addScaledMaximaAVX2(ub *float32, m *uint16, n int, q float32)
//
// For each of n groups (n a multiple of 8), eight at a time: widen the
// bfloat16 maxima to float32 (zero-extend to 32 bits, shift left by 16),
// multiply by q, add to ub. VMULPS and VADDPS round each product and
// each sum to float32 as the scalar loop does (no fused multiply-add).
TEXT ·addScaledMaximaAVX2(SB), NOSPLIT, $0-28
	MOVQ         ub+0(FP), DI
	MOVQ         m+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS q+24(FP), Y0
	SHRQ         $3, CX
	JZ           done

loop:
	VPMOVZXWD (SI), Y1
	VPSLLD    $16, Y1, Y1
	VMULPS    Y0, Y1, Y1
	VADDPS    (DI), Y1, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       loop

done:
	VZEROUPPER
	RET
