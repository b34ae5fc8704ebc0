package vector

import (
	"reflect"
	"testing"
)

func TestSparseAddScaled(t *testing.T) {
	a := Sparse{Indices: []uint32{1, 3, 7}, Values: []float32{1, 2, 3}}
	b := Sparse{Indices: []uint32{0, 3, 9}, Values: []float32{10, 10, 10}}
	got := a.AddScaled(b, 0.5)
	want := Sparse{Indices: []uint32{0, 1, 3, 7, 9}, Values: []float32{5, 1, 7, 3, 5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AddScaled = %+v, want %+v", got, want)
	}
	if a.Values[1] != 2 || b.Values[1] != 10 {
		t.Fatal("AddScaled modified an input")
	}
	q := Sparse{Indices: []uint32{3}, Values: []float32{2}}
	if d := q.Dot(got); d != 14 {
		t.Fatalf("Dot = %v, want 14", d)
	}
}

func TestVectorAddScaled(t *testing.T) {
	v := Vector{Dense: []float32{1, 2}}
	o := Vector{Dense: []float32{2, 2}, Sparse: &Sparse{Indices: []uint32{4}, Values: []float32{2}}}
	got := v.AddScaled(o, 0.5)
	if !reflect.DeepEqual(got.Dense, []float32{2, 3}) || got.Sparse == nil || got.Sparse.Values[0] != 1 {
		t.Fatalf("AddScaled = %+v", got)
	}
}

// AppendScaled leaves what dst held in place and appends what AddScaled
// returns.
func TestAppendScaled(t *testing.T) {
	a := Sparse{Indices: []uint32{1, 3, 7}, Values: []float32{1, 2, 3}}
	b := Sparse{Indices: []uint32{0, 3, 9}, Values: []float32{10, 10, 10}}
	dst := Sparse{Indices: []uint32{42}, Values: []float32{-1}}
	got := AppendScaled(dst, a, b, 0.5)
	want := Sparse{Indices: []uint32{42, 0, 1, 3, 7, 9}, Values: []float32{-1, 5, 1, 7, 3, 5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("AppendScaled = %+v, want %+v", got, want)
	}
}

// TestCloneKeepsNothingOfTheOriginal checks that changing a vector's
// arrays leaves its clone as it was, and that absent parts stay absent.
func TestCloneKeepsNothingOfTheOriginal(t *testing.T) {
	v := Vector{Sparse: &Sparse{Indices: []uint32{1, 4}, Values: []float32{0.5, 2}}, Dense: []float32{1, 2, 3}}
	c := v.Clone()
	v.Sparse.Indices[0], v.Sparse.Values[1], v.Dense[2] = 9, 9, 9
	if !reflect.DeepEqual(c, Vector{Sparse: &Sparse{Indices: []uint32{1, 4}, Values: []float32{0.5, 2}}, Dense: []float32{1, 2, 3}}) {
		t.Fatalf("clone changed with the original: %+v", c)
	}
	if c := (Vector{}).Clone(); c.Sparse != nil || c.Dense != nil {
		t.Fatalf("clone of an empty vector is %+v", c)
	}
}
