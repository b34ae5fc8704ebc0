package remote

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// TestDecodeJSONDocumentReadsAsEncodingJSON: lines with "id", "_id" or
// both, escapes, metadata, nulls and keys in other case decode to what
// encoding/json makes of them, whichever path reads them.
func TestDecodeJSONDocumentReadsAsEncodingJSON(t *testing.T) {
	for _, line := range []string{
		`{"id":"a","text":"one"}`,
		`{"_id":"b","title":"T\u00e9","text":"x\ny","metadata":{"k":"v"}}`,
		`{"id":"a","_id":"b","text":"both"}`,
		`{"id":null,"_id":"b","text":null}`,
		`{"ID":"upper","text":"other case"}`,
		`{"id":"a","text":"x","extra":1}`,
		`{"id":"a","text":"\ud83d\ude00 \ud83d"}`,
		`{"id":"a","text":"x"} trailing`,
	} {
		got, gotErr := decodeJSONDocument([]byte(line))
		var want jsonDocument
		wantErr := json.Unmarshal([]byte(line), &want)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v, error %v\nwant %+v, error %v", line, got, gotErr, want, wantErr)
		}
	}
}
