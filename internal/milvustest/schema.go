package milvustest

import (
	"fmt"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

// Limits Milvus enforces by default.
const (
	maxNameLength    = 255
	maxVarCharLength = 65535
	maxDim           = 32768
	maxFields        = 64
	maxTopK          = 16384
	dynamicFieldName = "$meta"
	firstFieldID     = 100
)

// validName checks a collection, alias, field or database name as Milvus
// does: a letter or underscore first, then letters, digits and
// underscores, at most 255 characters.
func validName(kind, name string) error {
	if name == "" {
		return merr.WrapErrParameterInvalidMsg("the %s name should not be empty", kind)
	}
	if len(name) > maxNameLength {
		return merr.WrapErrParameterInvalidMsg("the length of a %s name must be less than %d characters: %s", kind, maxNameLength, name)
	}
	first := name[0]
	if first != '_' && !isLetter(first) {
		return merr.WrapErrParameterInvalidMsg("the first character of a %s name must be an underscore or letter: %s", kind, name)
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if c != '_' && !isLetter(c) && !(c >= '0' && c <= '9') {
			return merr.WrapErrParameterInvalidMsg("%s name can only contain numbers, letters and underscores: %s", kind, name)
		}
	}
	return nil
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func kv(pairs []*commonpb.KeyValuePair) map[string]string {
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p.GetKey()] = p.GetValue()
	}
	return out
}

func isVector(t schemapb.DataType) bool {
	switch t {
	case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_SparseFloatVector, schemapb.DataType_Int8Vector:
		return true
	}
	return false
}

// supportedType reports whether the server stores fields of type t.
func supportedType(t schemapb.DataType) bool {
	switch t {
	case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_Float, schemapb.DataType_Double, schemapb.DataType_VarChar,
		schemapb.DataType_JSON, schemapb.DataType_FloatVector, schemapb.DataType_SparseFloatVector:
		return true
	}
	return false
}

// dimOf returns the dim type parameter of a dense vector field.
func dimOf(f *schemapb.FieldSchema) int {
	d, _ := strconv.Atoi(kv(f.GetTypeParams())["dim"])
	return d
}

// maxLengthOf returns the max_length type parameter of a VarChar field.
func maxLengthOf(f *schemapb.FieldSchema) int {
	n, _ := strconv.Atoi(kv(f.GetTypeParams())["max_length"])
	return n
}

// checkSchema validates a schema the way Milvus's proxy does for the
// features this server implements, assigns field ids and adds the dynamic
// field when enabled.
func checkSchema(name string, sch *schemapb.CollectionSchema) error {
	if sch.GetName() != "" && sch.GetName() != name {
		return merr.WrapErrParameterInvalidMsg("collection name [%s] does not match schema name [%s]", name, sch.GetName())
	}
	sch.Name = name
	if len(sch.Fields) == 0 {
		return merr.WrapErrParameterInvalidMsg("schema does not contain any field")
	}
	if len(sch.Fields) > maxFields {
		return merr.WrapErrParameterInvalidMsg("maximum field's number should be limited to %d", maxFields)
	}
	seen := make(map[string]bool)
	pks, vectors := 0, 0
	for i, f := range sch.Fields {
		if err := validName("field", f.GetName()); err != nil {
			return err
		}
		if seen[f.GetName()] {
			return merr.WrapErrParameterInvalidMsg("duplicated field name %s found", f.GetName())
		}
		seen[f.GetName()] = true
		if f.GetIsDynamic() {
			return merr.WrapErrParameterInvalidMsg("cannot explicitly set a field as a dynamic field")
		}
		if !supportedType(f.GetDataType()) {
			return merr.WrapErrParameterInvalidMsg("field %s: data type %s is not supported by milvustest", f.GetName(), f.GetDataType())
		}
		params := kv(f.GetTypeParams())
		switch f.GetDataType() {
		case schemapb.DataType_VarChar:
			s, ok := params["max_length"]
			if !ok {
				return merr.WrapErrParameterInvalidMsg("type param(max_length) should be specified for the field(%s) of collection %s", f.GetName(), name)
			}
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 || n > maxVarCharLength {
				return merr.WrapErrParameterInvalidMsg("the maximum length specified for the field(%s) should be in (0, %d], but got %s instead", f.GetName(), maxVarCharLength, s)
			}
		case schemapb.DataType_FloatVector:
			s, ok := params["dim"]
			if !ok {
				return merr.WrapErrParameterInvalidMsg("dimension is not defined in field type params of field %s, check type param `dim` for vector field", f.GetName())
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 2 || n > maxDim {
				return merr.WrapErrParameterInvalidMsg("invalid dimension: %s of field %s. float vector dimension should be in range 2 ~ %d", s, f.GetName(), maxDim)
			}
		case schemapb.DataType_SparseFloatVector:
			if _, ok := params["dim"]; ok {
				return merr.WrapErrParameterInvalidMsg("dim should not be specified for sparse vector field %s", f.GetName())
			}
		}
		if isVector(f.GetDataType()) {
			vectors++
			if f.GetNullable() && f.GetDataType() != schemapb.DataType_SparseFloatVector && f.GetDataType() != schemapb.DataType_FloatVector {
				return merr.WrapErrParameterInvalidMsg("vector type not support null, field %s", f.GetName())
			}
		}
		if f.GetIsPrimaryKey() {
			pks++
			if f.GetDataType() != schemapb.DataType_Int64 && f.GetDataType() != schemapb.DataType_VarChar {
				return merr.WrapErrParameterInvalidMsg("only int64 and varchar can be used as the primary key, field %s is %s", f.GetName(), f.GetDataType())
			}
			if f.GetNullable() {
				return merr.WrapErrParameterInvalidMsg("primary field not support null")
			}
			if f.GetAutoID() && f.GetDataType() != schemapb.DataType_Int64 {
				return merr.WrapErrParameterInvalidMsg("only int64 primary keys can be generated by autoID, field %s", f.GetName())
			}
		} else if f.GetAutoID() {
			return merr.WrapErrParameterInvalidMsg("only the primary key field can have autoID, field %s", f.GetName())
		}
		f.FieldID = int64(firstFieldID + i)
	}
	if pks != 1 {
		return merr.WrapErrParameterInvalidMsg("there should be exactly one primary key in collection %s, found %d", name, pks)
	}
	if vectors == 0 {
		return merr.WrapErrParameterInvalidMsg("schema does not contain vector field: %s", name)
	}
	if sch.GetEnableDynamicField() {
		sch.Fields = append(sch.Fields, &schemapb.FieldSchema{
			FieldID:   int64(firstFieldID + len(sch.Fields)),
			Name:      dynamicFieldName,
			DataType:  schemapb.DataType_JSON,
			IsDynamic: true,
		})
	}
	return nil
}

// sameSchema reports whether two validated schemas define the same
// fields, which makes a repeated CreateCollection idempotent.
func sameSchema(a, b *schemapb.CollectionSchema) bool {
	if a.GetEnableDynamicField() != b.GetEnableDynamicField() || len(a.Fields) != len(b.Fields) {
		return false
	}
	for i := range a.Fields {
		if !sameField(a.Fields[i], b.Fields[i]) {
			return false
		}
	}
	return true
}

func sameField(a, b *schemapb.FieldSchema) bool {
	if a.GetName() != b.GetName() || a.GetDataType() != b.GetDataType() || a.GetIsPrimaryKey() != b.GetIsPrimaryKey() ||
		a.GetAutoID() != b.GetAutoID() || a.GetNullable() != b.GetNullable() || a.GetIsPartitionKey() != b.GetIsPartitionKey() ||
		a.GetElementType() != b.GetElementType() || a.GetIsDynamic() != b.GetIsDynamic() {
		return false
	}
	pa, pb := kv(a.GetTypeParams()), kv(b.GetTypeParams())
	if len(pa) != len(pb) {
		return false
	}
	for k, v := range pa {
		if pb[k] != v {
			return false
		}
	}
	return true
}

// describeField is a short form of a field for error messages.
func describeField(f *schemapb.FieldSchema) string {
	return fmt.Sprintf("%s(%s)", f.GetName(), f.GetDataType())
}
