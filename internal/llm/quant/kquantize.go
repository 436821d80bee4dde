package quant

import (
	"math"
)

// The K-quant encoders of llama.cpp's reference quantiser (what
// llama-quantize writes without an importance matrix), step for step in
// float32: each sub-block gets the scale (and minimum) that fits it best
// by a small search, the super-block's scales are quantised to 6 or 8
// bits under one half-precision scale, and the weights are quantised again
// against those. The search compares float32 sums, so every rounding here
// is the reference's: a product is converted on its own before it is
// added to, and sums run in the reference's order.

// nearestInt rounds to the nearest integer, ties to even, as the
// reference does by adding 1.5·2^23 (valid for |v| < 2^22).
func nearestInt(v float32) int {
	b := math.Float32bits(v + 12582912)
	return int(b&0x007fffff) - 0x00400000
}

func abs32(v float32) float32 { return float32(math.Abs(float64(v))) }

// groupMaxEps is the magnitude below which the reference calls a group
// all zero.
const groupMaxEps = 1e-15

// fitScaleMin chooses, for x (n values) and their weights, levels L in
// [0, nmax], a scale and a minimum with x ≈ scale·L − min, by the weighted
// error over nstep+1 trial scales around nmax/(max − min) (the reference's
// make_qkx2_quants; the minimum is never above 0, the returned min its
// negation).
func fitScaleMin(x, weights []float32, nmax int, L, aux []uint8, rmin, rdelta float32, nstep int) (scale, theMin float32) {
	n := len(x)
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		lo, hi = min(lo, x[i]), max(hi, x[i])
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	lo = min(lo, 0)
	if hi == lo {
		clear(L[:n])
		return 0, -lo
	}
	iscale := float32(nmax) / (hi - lo)
	scale = 1 / iscale
	var bestErr float32
	for i := range n {
		l := max(0, min(nmax, nearestInt(float32(iscale*float32(x[i]-lo)))))
		L[i] = uint8(l)
		diff := float32(float32(scale*float32(l))+lo) - x[i]
		bestErr += float32(weights[i] * float32(diff*diff))
	}
	if nstep < 1 {
		return scale, -lo
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+float32(nmax)) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i := range n {
			l := max(0, min(nmax, nearestInt(float32(iscale*float32(x[i]-lo)))))
			aux[i] = uint8(l)
			w := weights[i]
			wl := float32(w * float32(l))
			sumL += wl
			sumL2 += float32(wl * float32(l))
			sumXL += float32(wl * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D <= 0 {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		var curErr float32
		for i := range n {
			diff := float32(float32(thisScale*float32(aux[i]))+thisMin) - x[i]
			curErr += float32(weights[i] * float32(diff*diff))
		}
		if curErr < bestErr {
			copy(L[:n], aux[:n])
			bestErr, scale, lo = curErr, thisScale, thisMin
		}
	}
	return scale, -lo
}

// fitSymmetric chooses levels L in [−nmax, nmax−1] (stored offset by
// nmax) and a scale with x ≈ scale·L, weighting each value by x², by a
// search over 19 trial scales around −nmax/max (the reference's
// make_qx_quants with rmse_type 1).
func fitSymmetric(x []float32, nmax int, L []int8) float32 {
	var mx, amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, mx = a, v
		}
	}
	if amax < groupMaxEps {
		clear(L[:len(x)])
		return 0
	}
	level := func(iscale, v float32) int {
		return max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
	}
	iscale := float32(-nmax) / mx
	var sumLX, sumL2 float32
	for i, v := range x {
		l := level(iscale, v)
		L[i] = int8(l + nmax)
		w := float32(v * v)
		sumLX += float32(float32(w*v) * float32(l))
		sumL2 += float32(float32(w*float32(l)) * float32(l))
	}
	var scale float32
	if sumL2 != 0 {
		scale = sumLX / sumL2
	}
	best := float32(scale * sumLX)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -float32(float32(nmax)+float32(0.1*float32(is))) / mx
		sumLX, sumL2 = 0, 0
		for _, v := range x {
			l := level(iscale, v)
			w := float32(v * v)
			sumLX += float32(float32(w*v) * float32(l))
			sumL2 += float32(float32(w*float32(l)) * float32(l))
		}
		if sumL2 > 0 && float32(sumLX*sumLX) > float32(best*sumL2) {
			for i, v := range x {
				L[i] = int8(nmax + level(iscale, v))
			}
			scale = sumLX / sumL2
			best = float32(scale * sumLX)
		}
	}
	return scale
}

// packScaleMinK4 stores the 6-bit scale and minimum of sub-block j, the
// inverse of ScaleMinK4.
func packScaleMinK4(scales []byte, j int, ls, lm uint8) {
	if j < 4 {
		scales[j], scales[j+4] = ls, lm
		return
	}
	scales[j+4] = ls&0xf | lm&0xf<<4
	scales[j-4] |= ls >> 4 << 6
	scales[j] |= lm >> 4 << 6
}

// quantizeScaleMinK quantises one super-block of Q4_K or Q5_K (nmax 15 or
// 31) into its d, dmin and 12 scale bytes, and its levels into L; rmin,
// rdelta and nstep are the sub-block search's.
func quantizeScaleMinK(head []byte, L []uint8, x []float32, nmax int, rmin, rdelta float32, nstep int) {
	var scales, mins [8]float32
	var weights [32]float32
	var aux [32]uint8
	var maxScale, maxMin float32
	for j := range 8 {
		sub := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range sub {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range sub {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = fitScaleMin(sub, weights[:], nmax, L[32*j:], aux[:], rmin, rdelta, nstep)
		maxScale, maxMin = max(maxScale, scales[j]), max(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := head[4:16]
	clear(sc)
	for j := range 8 {
		ls := min(63, uint8(nearestInt(float32(invScale*scales[j]))))
		lm := min(63, uint8(nearestInt(float32(invMin*mins[j]))))
		packScaleMinK4(sc, j, ls, lm)
	}
	putHalf(head, maxScale/63)
	putHalf(head[2:], maxMin/63)
	d, dmin := half(head), half(head[2:])
	for j := range 8 {
		s, m := ScaleMinK4(sc, j)
		dj := float32(d * float32(s))
		if dj == 0 {
			continue // the sub-block keeps the search's levels
		}
		dm := float32(dmin * float32(m))
		for i := 32 * j; i < 32*j+32; i++ {
			L[i] = uint8(max(0, min(nmax, nearestInt((x[i]+dm)/dj))))
		}
	}
}

func quantizeQ4_K(dst []byte, src []float32) {
	var L [QK]uint8
	quantizeScaleMinK(dst, L[:], src, 15, -1, 0.1, 20)
	qs := dst[16:144]
	for c := range 4 {
		for l := range 32 {
			qs[32*c+l] = L[64*c+l] | L[64*c+l+32]<<4
		}
	}
}

func quantizeQ5_K(dst []byte, src []float32) {
	var L [QK]uint8
	quantizeScaleMinK(dst, L[:], src, 31, -0.5, 0.1, 15)
	qh, qs := dst[16:48], dst[48:176]
	clear(qh)
	for c := range 4 {
		for l := range 32 {
			lo, hi := L[64*c+l], L[64*c+l+32]
			qh[l] |= lo>>4<<(2*c) | hi>>4<<(2*c+1)
			qs[32*c+l] = lo&0xf | hi&0xf<<4
		}
	}
}

func quantizeQ6_K(dst []byte, src []float32) {
	var L [QK]int8
	var scales [16]float32
	var maxScale, maxAbs float32
	for ib := range 16 {
		s := fitSymmetric(src[16*ib:16*ib+16], 32, L[16*ib:])
		scales[ib] = s
		if a := abs32(s); a > maxAbs {
			maxAbs, maxScale = a, s
		}
	}
	clear(dst[:210])
	if maxAbs < groupMaxEps {
		return // all zero, d = +0
	}
	iscale := -128 / maxScale
	putHalf(dst[208:], 1/iscale)
	d := half(dst[208:])
	sc := dst[192:208]
	for ib := range 16 {
		sc[ib] = byte(int8(min(127, nearestInt(float32(iscale*scales[ib])))))
	}
	for j := range 16 {
		dj := float32(d * float32(int8(sc[j])))
		if dj == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = int8(max(-32, min(31, nearestInt(src[i]/dj))) + 32)
		}
	}
	ql, qh := dst[0:128], dst[128:192]
	for h := range 2 {
		for l := range 32 {
			q := [4]uint8{uint8(L[128*h+l]), uint8(L[128*h+l+32]), uint8(L[128*h+l+64]), uint8(L[128*h+l+96])}
			ql[64*h+l] = q[0]&0xf | q[2]&0xf<<4
			ql[64*h+l+32] = q[1]&0xf | q[3]&0xf<<4
			qh[32*h+l] = q[0]>>4 | q[1]>>4<<2 | q[2]>>4<<4 | q[3]>>4<<6
		}
	}
}
