package embedded

import (
	"context"
	"math"

	"github.com/parentrag/parentrag/internal/index"
)

// flatIndex stores dense vectors row-major in one contiguous slice. Row r
// belongs to record slot owner[r]; rows of tombstoned slots stay until
// compaction and search skips them. Under Cosine rows are stored
// normalized.
type flatIndex struct {
	dims  int
	data  []float32
	owner []uint32
}

func (f *flatIndex) rows() int { return len(f.owner) }

func (f *flatIndex) row(r uint32) []float32 {
	i := int(r) * f.dims
	return f.data[i : i+f.dims : i+f.dims]
}

// add appends v as a new row for slot and returns the row number.
func (f *flatIndex) add(slot uint32, v []float32, m index.Metric) uint32 {
	start := len(f.data)
	f.data = append(f.data, v...)
	if m == index.Cosine {
		if n := norm(v); n != 0 {
			row := f.data[start:]
			for i, x := range row {
				row[i] = float32(float64(x) / n)
			}
		}
	}
	f.owner = append(f.owner, slot)
	return uint32(len(f.owner) - 1)
}

// scan scores every row against q (already normalized under Cosine) and
// offers it to h: the exact flat search. It looks at ctx every checkEvery
// rows and returns its error when it is done.
func (f *flatIndex) scan(ctx context.Context, q []float32, m index.Metric, h *topK) error {
	d := f.dims
	data := f.data
	for r, slot := range f.owner {
		if r%checkEvery == checkEvery-1 {
			if err := checkpoint(ctx); err != nil {
				return err
			}
		}
		if m == index.L2 {
			h.offer(-l2(q, data[r*d:r*d+d]), slot)
		} else {
			h.offer(dot(q, data[r*d:r*d+d]), slot)
		}
	}
	return nil
}

// score is the metric score of a stored row against q.
func (f *flatIndex) score(q []float32, r uint32, m index.Metric) float32 {
	if m == index.L2 {
		return -l2(q, f.row(r))
	}
	return dot(q, f.row(r))
}

// dot is the float32 inner product summed in four interleaved lanes
// (element i goes to lane i mod 4, lanes added as (l0+l1)+(l2+l3)). The
// fixed order makes scores reproducible; they match the exact inner product
// up to float32 rounding.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		aa, bb := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// l2 is the Euclidean distance, its squares summed in the same four-lane
// order as dot.
func l2(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		aa, bb := a[i:i+4:i+4], b[i:i+4:i+4]
		d0, d1, d2, d3 := aa[0]-bb[0], aa[1]-bb[1], aa[2]-bb[2], aa[3]-bb[3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return float32(math.Sqrt(float64((s0 + s1) + (s2 + s3))))
}

// compacted drops rows of tombstoned slots in place and renumbers owners.
func (f *flatIndex) compacted(remap []uint32) flatIndex {
	d := f.dims
	n := 0
	for r, slot := range f.owner {
		s := remap[slot]
		if s == noSlot {
			continue
		}
		copy(f.data[n*d:n*d+d], f.data[r*d:r*d+d])
		f.owner[n] = s
		n++
	}
	out := flatIndex{dims: d, data: f.data[:n*d], owner: f.owner[:n]}
	if cap(out.data) > 2*len(out.data)+1024 {
		out.data = append([]float32(nil), out.data...)
		out.owner = append([]uint32(nil), out.owner...)
	}
	return out
}

func (f *flatIndex) memory() int64 {
	return 4*int64(cap(f.data)) + 4*int64(cap(f.owner))
}
