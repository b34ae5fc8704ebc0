//go:build amd64 && !purego

#include "textflag.h"

// func addScaledMaximaAVX2(ub *float32, m *uint8, n int, unit, q float32)
//
// For each of n groups (n a multiple of 8), eight at a time: widen the
// one-byte maxima to float32 (zero-extend to 32 bits, convert: exact),
// multiply by unit (a power of two: exact), multiply by q, add to ub.
// VMULPS and VADDPS round each product and each sum to float32 as the
// scalar loop does (no fused multiply-add).
TEXT ·addScaledMaximaAVX2(SB), NOSPLIT, $0-32
	MOVQ         ub+0(FP), DI
	MOVQ         m+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS unit+24(FP), Y2
	VBROADCASTSS q+28(FP), Y0
	SHRQ         $3, CX
	JZ           done

loop:
	VPMOVZXBD (SI), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS    Y2, Y1, Y1
	VMULPS    Y0, Y1, Y1
	VADDPS    (DI), Y1, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       loop

done:
	VZEROUPPER
	RET

// func firstAtLeastAVX2(ub *float32, n int, t float32) int
//
// Returns the index of the first of ub's n floats (n a multiple of 8) at
// or above t, n when none is: eight comparisons at a time (ordered, so a
// NaN is never at or above t), the first set bit of their mask.
TEXT ·firstAtLeastAVX2(SB), NOSPLIT, $0-32
	MOVQ         ub+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS t+16(FP), Y0
	XORQ         AX, AX

loop:
	CMPQ      AX, CX
	JAE       none
	VCMPPS    $0x12, (SI)(AX*4), Y0, Y1 // t <= ub[AX+i], quiet
	VMOVMSKPS Y1, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $8, AX
	JMP       loop

found:
	BSFL DX, DX
	ADDQ DX, AX

none:
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET
