package milvustest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"unicode/utf8"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

// Field values as rows hold them:
//
//	Bool                      bool
//	Int8, Int16, Int32, Int64 int64
//	Float                     float32
//	Double                    float64
//	VarChar                   string
//	JSON                      *jsonValue
//	FloatVector               []float32
//	SparseFloatVector         *sparseVec
//
// and nil for a null.

// jsonValue is a JSON field value: the bytes as inserted and their
// decoding (numbers as json.Number).
type jsonValue struct {
	raw []byte
	v   any
}

// sparseVec is one sparse row: strictly increasing indices and their
// values, and the row in Milvus's wire format (little-endian uint32 index,
// float32 value pairs).
type sparseVec struct {
	idx []uint32
	val []float32
	raw []byte
}

// decodeSparse parses and validates one sparse row as Milvus does
// (typeutil.ValidateSparseFloatRows).
func decodeSparse(b []byte) (*sparseVec, error) {
	if b == nil {
		return nil, merr.WrapErrParameterInvalidMsg("nil sparse float vector")
	}
	if len(b)%8 != 0 {
		return nil, merr.WrapErrParameterInvalidMsg("invalid data length in sparse float vector: %d", len(b))
	}
	n := len(b) / 8
	sv := &sparseVec{idx: make([]uint32, n), val: make([]float32, n), raw: b}
	for i := range n {
		idx := binary.LittleEndian.Uint32(b[i*8:])
		val := math.Float32frombits(binary.LittleEndian.Uint32(b[i*8+4:]))
		if idx == math.MaxUint32 {
			return nil, merr.WrapErrParameterInvalidMsg("invalid index in sparse float vector: must be less than 2^32-1")
		}
		if i > 0 && idx <= sv.idx[i-1] {
			return nil, merr.WrapErrParameterInvalidMsg("unsorted or same indices in sparse float vector")
		}
		if math.IsNaN(float64(val)) || math.IsInf(float64(val), 0) {
			return nil, merr.WrapErrParameterInvalidMsg("value not finite in sparse float vector: %v", val)
		}
		if val < 0 {
			return nil, merr.WrapErrParameterInvalidMsg("negative value in sparse float vector")
		}
		sv.idx[i], sv.val[i] = idx, val
	}
	return sv, nil
}

// dim is the sparse dimension Milvus reports: the largest index plus one.
func (s *sparseVec) dim() int64 {
	if len(s.idx) == 0 {
		return 0
	}
	return int64(s.idx[len(s.idx)-1]) + 1
}

// dot is the inner product of two sparse rows, summed in increasing index
// order in float32, the way vector.Sparse.Dot sums it. ok is false when
// the rows share no index with non-zero values on both sides.
func (s *sparseVec) dot(o *sparseVec) (sum float32, ok bool) {
	i, j := 0, 0
	for i < len(s.idx) && j < len(o.idx) {
		switch {
		case s.idx[i] == o.idx[j]:
			if s.val[i] != 0 && o.val[j] != 0 {
				ok = true
			}
			sum += s.val[i] * o.val[j]
			i++
			j++
		case s.idx[i] < o.idx[j]:
			i++
		default:
			j++
		}
	}
	return sum, ok
}

func decodeJSON(b []byte) (*jsonValue, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, merr.WrapErrParameterInvalidMsg("invalid JSON: %v", err)
	}
	if d.More() {
		return nil, merr.WrapErrParameterInvalidMsg("invalid JSON: trailing data")
	}
	return &jsonValue{raw: b, v: v}, nil
}

// decodeColumn turns one FieldData of an insert into n values for field f,
// validating them as Milvus's proxy does.
func decodeColumn(f *schemapb.FieldSchema, fd *schemapb.FieldData, n int) ([]any, error) {
	if fd.GetType() != f.GetDataType() {
		return nil, merr.WrapErrParameterInvalidMsg("the data type of field %s doesn't match, expected: %s, got %s",
			f.GetName(), f.GetDataType(), fd.GetType())
	}
	valid := fd.GetValidData()
	if len(valid) > 0 && !f.GetNullable() {
		return nil, merr.WrapErrParameterInvalidMsg("the field %s is not nullable but valid data is set", f.GetName())
	}
	present := n
	if len(valid) > 0 {
		if len(valid) != n {
			return nil, merr.WrapErrParameterInvalidMsg("the length of valid_data of field(%s) is wrong", f.GetName())
		}
		present = 0
		for _, v := range valid {
			if v {
				present++
			}
		}
	}
	vals, err := decodeValues(f, fd, n, present)
	if err != nil {
		return nil, err
	}
	if len(valid) == 0 {
		return vals, nil
	}
	out := make([]any, n)
	k := 0
	for i, v := range valid {
		if v {
			out[i] = vals[k]
			k++
		}
	}
	return out, nil
}

// decodeValues reads the values of fd. With valid data the column may be
// compact (present values only) or full (a placeholder for each null); both
// are accepted.
func decodeValues(f *schemapb.FieldSchema, fd *schemapb.FieldData, n, present int) ([]any, error) {
	name := f.GetName()
	count := func(got int) (int, error) {
		switch got {
		case present:
			return present, nil
		case n:
			return n, nil
		}
		return 0, merr.WrapErrParameterInvalidMsg("the num_rows (%d) of field (%s) is not equal to passed num_rows (%d)", got, name, n)
	}
	sc := fd.GetScalars()
	var out []any
	switch f.GetDataType() {
	case schemapb.DataType_Bool:
		d := sc.GetBoolData().GetData()
		if _, err := count(len(d)); err != nil {
			return nil, err
		}
		for _, v := range d {
			out = append(out, v)
		}
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32:
		d := sc.GetIntData().GetData()
		if _, err := count(len(d)); err != nil {
			return nil, err
		}
		lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
		switch f.GetDataType() {
		case schemapb.DataType_Int8:
			lo, hi = math.MinInt8, math.MaxInt8
		case schemapb.DataType_Int16:
			lo, hi = math.MinInt16, math.MaxInt16
		}
		for _, v := range d {
			if int64(v) < lo || int64(v) > hi {
				return nil, merr.WrapErrParameterInvalidMsg("the value %d of field %s is out of range of %s", v, name, f.GetDataType())
			}
			out = append(out, int64(v))
		}
	case schemapb.DataType_Int64:
		d := sc.GetLongData().GetData()
		if _, err := count(len(d)); err != nil {
			return nil, err
		}
		for _, v := range d {
			out = append(out, v)
		}
	case schemapb.DataType_Float:
		d := sc.GetFloatData().GetData()
		if _, err := count(len(d)); err != nil {
			return nil, err
		}
		for _, v := range d {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, merr.WrapErrParameterInvalidMsg("the value of field %s is not finite", name)
			}
			out = append(out, v)
		}
	case schemapb.DataType_Double:
		d := sc.GetDoubleData().GetData()
		if _, err := count(len(d)); err != nil {
			return nil, err
		}
		for _, v := range d {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, merr.WrapErrParameterInvalidMsg("the value of field %s is not finite", name)
			}
			out = append(out, v)
		}
	case schemapb.DataType_VarChar:
		d := sc.GetStringData().GetData()
		if _, err := count(len(d)); err != nil {
			return nil, err
		}
		max := maxLengthOf(f)
		for i, v := range d {
			if len(v) > max {
				return nil, merr.WrapErrParameterInvalidMsg("length of varchar field %s exceeds max length, row number: %d, length: %d, max length: %d",
					name, i, len(v), max)
			}
			if !utf8.ValidString(v) {
				return nil, merr.WrapErrParameterInvalidMsg("string field %s has invalid utf-8 data, row number: %d", name, i)
			}
			out = append(out, v)
		}
	case schemapb.DataType_JSON:
		d := sc.GetJsonData().GetData()
		if _, err := count(len(d)); err != nil {
			return nil, err
		}
		for _, b := range d {
			j, err := decodeJSON(b)
			if err != nil {
				return nil, err
			}
			out = append(out, j)
		}
	case schemapb.DataType_FloatVector:
		vf := fd.GetVectors()
		dim := dimOf(f)
		if int(vf.GetDim()) != dim {
			return nil, merr.WrapErrParameterInvalidMsg("the dim (%d) of field data(%s) is not equal to schema dim (%d)", vf.GetDim(), name, dim)
		}
		d := vf.GetFloatVector().GetData()
		if len(d)%dim != 0 {
			return nil, merr.WrapErrParameterInvalidMsg("the length(%d) of float data should divide the dim(%d)", len(d), dim)
		}
		if _, err := count(len(d) / dim); err != nil {
			return nil, err
		}
		for i := 0; i < len(d); i += dim {
			v := make([]float32, dim)
			copy(v, d[i:i+dim])
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return nil, merr.WrapErrParameterInvalidMsg("float vector of field %s contains a value that is not finite", name)
				}
			}
			out = append(out, v)
		}
	case schemapb.DataType_SparseFloatVector:
		d := fd.GetVectors().GetSparseFloatVector().GetContents()
		if _, err := count(len(d)); err != nil {
			return nil, err
		}
		for _, b := range d {
			sv, err := decodeSparse(b)
			if err != nil {
				return nil, err
			}
			out = append(out, sv)
		}
	default:
		return nil, merr.WrapErrParameterInvalidMsg("data type %s of field %s is not supported by milvustest", f.GetDataType(), name)
	}
	if len(out) == n && present != n {
		// Full column with placeholders: keep only the valid values so the
		// caller can spread them over the valid rows.
		valid := fd.GetValidData()
		kept := out[:0:0]
		for i, v := range out {
			if valid[i] {
				kept = append(kept, v)
			}
		}
		out = kept
	}
	return out, nil
}

// defaultValue returns the value of f for a row that does not set it.
func defaultValue(f *schemapb.FieldSchema) (any, bool) {
	dv := f.GetDefaultValue()
	if dv == nil {
		if f.GetNullable() {
			return nil, true
		}
		return nil, false
	}
	switch f.GetDataType() {
	case schemapb.DataType_Bool:
		return dv.GetBoolData(), true
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32:
		return int64(dv.GetIntData()), true
	case schemapb.DataType_Int64:
		return dv.GetLongData(), true
	case schemapb.DataType_Float:
		return dv.GetFloatData(), true
	case schemapb.DataType_Double:
		return dv.GetDoubleData(), true
	case schemapb.DataType_VarChar:
		return dv.GetStringData(), true
	}
	return nil, f.GetNullable()
}

// encodeColumn builds the FieldData of field f over vals, as Milvus returns
// output fields.
func encodeColumn(f *schemapb.FieldSchema, vals []any) *schemapb.FieldData {
	fd := &schemapb.FieldData{Type: f.GetDataType(), FieldName: f.GetName(), FieldId: f.GetFieldID(), IsDynamic: f.GetIsDynamic()}
	if f.GetNullable() {
		fd.ValidData = make([]bool, len(vals))
		for i, v := range vals {
			fd.ValidData[i] = v != nil
		}
	}
	scalars := func(sf *schemapb.ScalarField) {
		fd.Field = &schemapb.FieldData_Scalars{Scalars: sf}
	}
	switch f.GetDataType() {
	case schemapb.DataType_Bool:
		d := make([]bool, len(vals))
		for i, v := range vals {
			d[i], _ = v.(bool)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: d}}})
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32:
		d := make([]int32, len(vals))
		for i, v := range vals {
			x, _ := v.(int64)
			d[i] = int32(x)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: d}}})
	case schemapb.DataType_Int64:
		d := make([]int64, len(vals))
		for i, v := range vals {
			d[i], _ = v.(int64)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: d}}})
	case schemapb.DataType_Float:
		d := make([]float32, len(vals))
		for i, v := range vals {
			d[i], _ = v.(float32)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: d}}})
	case schemapb.DataType_Double:
		d := make([]float64, len(vals))
		for i, v := range vals {
			d[i], _ = v.(float64)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: d}}})
	case schemapb.DataType_VarChar:
		d := make([]string, len(vals))
		for i, v := range vals {
			d[i], _ = v.(string)
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: d}}})
	case schemapb.DataType_JSON:
		d := make([][]byte, len(vals))
		for i, v := range vals {
			if j, ok := v.(*jsonValue); ok {
				d[i] = j.raw
			} else {
				d[i] = []byte("{}")
			}
		}
		scalars(&schemapb.ScalarField{Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: d}}})
	case schemapb.DataType_FloatVector:
		dim := dimOf(f)
		d := make([]float32, 0, dim*len(vals))
		for _, v := range vals {
			x, _ := v.([]float32)
			if len(x) != dim {
				x = make([]float32, dim)
			}
			d = append(d, x...)
		}
		fd.Field = &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
			Dim:  int64(dim),
			Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: d}},
		}}
	case schemapb.DataType_SparseFloatVector:
		d := make([][]byte, len(vals))
		var dim int64
		for i, v := range vals {
			if sv, ok := v.(*sparseVec); ok {
				d[i] = sv.raw
				dim = max(dim, sv.dim())
			} else {
				d[i] = []byte{}
			}
		}
		fd.Field = &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
			Dim:  dim,
			Data: &schemapb.VectorField_SparseFloatVector{SparseFloatVector: &schemapb.SparseFloatArray{Contents: d, Dim: dim}},
		}}
	}
	return fd
}

// idsOf builds the IDs message of primary keys.
func idsOf(pk *schemapb.FieldSchema, keys []any) *schemapb.IDs {
	if pk.GetDataType() == schemapb.DataType_Int64 {
		d := make([]int64, len(keys))
		for i, k := range keys {
			d[i], _ = k.(int64)
		}
		return &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: d}}}
	}
	d := make([]string, len(keys))
	for i, k := range keys {
		d[i], _ = k.(string)
	}
	return &schemapb.IDs{IdField: &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: d}}}
}
