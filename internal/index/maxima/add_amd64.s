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

// func addFourScaledMaximaAVX2(ub *float32, m0, m1, m2, m3 *uint8, n int, unit, q *[4]float32)
//
// addScaledMaximaAVX2 for four lists of maxima in one pass over ub: each
// eight bounds are loaded once, get the four products added one after
// another in list order (the sums addScaledMaximaAVX2 called four times
// makes), and are stored once.
TEXT ·addFourScaledMaximaAVX2(SB), NOSPLIT, $0-64
	MOVQ         ub+0(FP), DI
	MOVQ         m0+8(FP), R8
	MOVQ         m1+16(FP), R9
	MOVQ         m2+24(FP), R10
	MOVQ         m3+32(FP), R11
	MOVQ         n+40(FP), CX
	MOVQ         unit+48(FP), R12
	MOVQ         q+56(FP), R13
	VBROADCASTSS 0(R12), Y8
	VBROADCASTSS 4(R12), Y9
	VBROADCASTSS 8(R12), Y10
	VBROADCASTSS 12(R12), Y11
	VBROADCASTSS 0(R13), Y12
	VBROADCASTSS 4(R13), Y13
	VBROADCASTSS 8(R13), Y14
	VBROADCASTSS 12(R13), Y15
	XORQ         AX, AX
	SHRQ         $3, CX
	JZ           done4

loop4:
	VMOVUPS   (DI), Y0
	VPMOVZXBD (R8)(AX*1), Y1
	VCVTDQ2PS Y1, Y1
	VMULPS    Y8, Y1, Y1
	VMULPS    Y12, Y1, Y1
	VADDPS    Y1, Y0, Y0
	VPMOVZXBD (R9)(AX*1), Y2
	VCVTDQ2PS Y2, Y2
	VMULPS    Y9, Y2, Y2
	VMULPS    Y13, Y2, Y2
	VADDPS    Y2, Y0, Y0
	VPMOVZXBD (R10)(AX*1), Y3
	VCVTDQ2PS Y3, Y3
	VMULPS    Y10, Y3, Y3
	VMULPS    Y14, Y3, Y3
	VADDPS    Y3, Y0, Y0
	VPMOVZXBD (R11)(AX*1), Y4
	VCVTDQ2PS Y4, Y4
	VMULPS    Y11, Y4, Y4
	VMULPS    Y15, Y4, Y4
	VADDPS    Y4, Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $32, DI
	ADDQ      $8, AX
	DECQ      CX
	JNZ       loop4

done4:
	VZEROUPPER
	RET

// func addScaledBitsAVX2(ub *float32, m *uint32, n int, q float32)
//
// For each of n groups (n a multiple of 8), eight at a time: read the
// float32 whose bits m holds, multiply by q, add to ub, and zero m.
// VMULPS and VADDPS round the product and the sum to float32 as the
// scalar loop does.
TEXT ·addScaledBitsAVX2(SB), NOSPLIT, $0-28
	MOVQ         ub+0(FP), DI
	MOVQ         m+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS q+24(FP), Y0
	VXORPS       Y3, Y3, Y3
	SHRQ         $3, CX
	JZ           doneb

loopb:
	VMULPS  (SI), Y0, Y1
	VADDPS  (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	VMOVUPS Y3, (SI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loopb

doneb:
	VZEROUPPER
	RET
