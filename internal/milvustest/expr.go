package milvustest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

// This file implements the part of Milvus's boolean expression language
// (the filter of Search, Query and Delete) that tests need:
//
//	a == b, a != b, a < b, a <= b, a > b, a >= b
//	a in [x, y], a not in [x, y]
//	a like "pre%", "%suf", "%mid%", with _ for one character
//	a is null, a is not null, exists a
//	json_contains(a, x), json_contains_any(a, [..]), json_contains_all(a, [..])
//	(array_contains* are accepted as synonyms)
//	p and q, p && q, p or q, p || q, not p, !p, (p)
//
// over scalar fields, JSON paths (metadata["k"], metadata["a"]["b"],
// metadata["list"][0]), keys of the dynamic field, literals (strings in
// double or single quotes, integers, floats, true/false, lists) and
// template placeholders ({name}, from expr_template_values). Keywords are
// case-insensitive. A JSON path that does not exist, or holds a value of
// another type than it is compared with, makes the comparison false.

// predicate is a compiled boolean expression over a row's values.
type predicate func(vals []any) bool

// operand is a compiled value expression; ok is false for a missing or
// null value.
type operand func(vals []any) (v any, ok bool)

// kind is the static type of an operand, for Milvus's type checks.
type kind int

const (
	kindAny kind = iota // JSON or dynamic values: checked at run time
	kindString
	kindNumber
	kindBool
	kindList
)

type opnd struct {
	eval  operand
	kind  kind
	lit   bool   // a literal
	field string // a scalar field name, when it is one
}

type token struct {
	kind string // "ident", "string", "number", "template", "op", or the punctuation itself
	text string
	pos  int
}

func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '[' || c == ']' || c == ',':
			out = append(out, token{kind: string(c), text: string(c), pos: i})
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			s, err := unquote(src[i:j+1], c)
			if err != nil {
				return nil, fmt.Errorf("bad string literal at %d: %v", i, err)
			}
			out = append(out, token{kind: "string", text: s, pos: i})
			i = j + 1
		case c == '{':
			j := strings.IndexByte(src[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("unterminated template at %d", i)
			}
			out = append(out, token{kind: "template", text: strings.TrimSpace(src[i+1 : i+j]), pos: i})
			i += j + 1
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == 'e' || src[j] == 'E' ||
				((src[j] == '+' || src[j] == '-') && j > i && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			out = append(out, token{kind: "number", text: src[i:j], pos: i})
			i = j
		case c == '_' || c == '$' || isLetter(c):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '$' || isLetter(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, token{kind: "ident", text: src[i:j], pos: i})
			i = j
		default:
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "==", "!=", "<=", ">=", "&&", "||":
				out = append(out, token{kind: "op", text: two, pos: i})
				i += 2
				continue
			}
			switch c {
			case '<', '>', '!', '-', '+':
				out = append(out, token{kind: "op", text: string(c), pos: i})
				i++
				continue
			}
			return nil, fmt.Errorf("unexpected character %q at %d", c, i)
		}
	}
	return append(out, token{kind: "eof", pos: len(src)}), nil
}

// unquote decodes a string literal with Go escapes; a single-quoted one
// may hold a bare double quote.
func unquote(lit string, q byte) (string, error) {
	if q == '"' {
		return strconv.Unquote(lit)
	}
	body := lit[1 : len(lit)-1]
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(body); i++ {
		switch {
		case body[i] == '\\' && i+1 < len(body) && body[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case body[i] == '\\' && i+1 < len(body):
			b.WriteByte('\\')
			b.WriteByte(body[i+1])
			i++
		case body[i] == '"':
			b.WriteString(`\"`)
		default:
			b.WriteByte(body[i])
		}
	}
	b.WriteByte('"')
	return strconv.Unquote(b.String())
}

type parser struct {
	toks   []token
	p      int
	coll   *collection
	tmpl   map[string]*schemapb.TemplateValue
	source string
}

// compileExpr compiles a filter for collection c. An empty expression
// matches every row.
func compileExpr(c *collection, src string, tmpl map[string]*schemapb.TemplateValue) (predicate, error) {
	if strings.TrimSpace(src) == "" {
		return func([]any) bool { return true }, nil
	}
	toks, err := lex(src)
	if err != nil {
		return nil, exprError(src, err)
	}
	ps := &parser{toks: toks, coll: c, tmpl: tmpl, source: src}
	pred, err := ps.parseOr()
	if err != nil {
		return nil, exprError(src, err)
	}
	if t := ps.peek(); t.kind != "eof" {
		return nil, exprError(src, fmt.Errorf("unexpected %q at %d", t.text, t.pos))
	}
	return pred, nil
}

func exprError(src string, err error) error {
	return merr.WrapErrParameterInvalidMsg("cannot parse expression: %s, error: %v", src, err)
}

func (ps *parser) peek() token { return ps.toks[ps.p] }
func (ps *parser) next() token {
	t := ps.toks[ps.p]
	if t.kind != "eof" {
		ps.p++
	}
	return t
}

func (ps *parser) keyword(words ...string) bool {
	t := ps.peek()
	if t.kind != "ident" {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(t.text, w) {
			return true
		}
	}
	return false
}

func (ps *parser) expect(kind string) (token, error) {
	t := ps.next()
	if t.kind != kind {
		return t, fmt.Errorf("expected %q at %d, got %q", kind, t.pos, t.text)
	}
	return t, nil
}

func (ps *parser) parseOr() (predicate, error) {
	left, err := ps.parseAnd()
	if err != nil {
		return nil, err
	}
	for ps.keyword("or") || (ps.peek().kind == "op" && ps.peek().text == "||") {
		ps.next()
		right, err := ps.parseAnd()
		if err != nil {
			return nil, err
		}
		l := left
		left = func(v []any) bool { return l(v) || right(v) }
	}
	return left, nil
}

func (ps *parser) parseAnd() (predicate, error) {
	left, err := ps.parseNot()
	if err != nil {
		return nil, err
	}
	for ps.keyword("and") || (ps.peek().kind == "op" && ps.peek().text == "&&") {
		ps.next()
		right, err := ps.parseNot()
		if err != nil {
			return nil, err
		}
		l := left
		left = func(v []any) bool { return l(v) && right(v) }
	}
	return left, nil
}

func (ps *parser) parseNot() (predicate, error) {
	if ps.keyword("not") || (ps.peek().kind == "op" && ps.peek().text == "!") {
		ps.next()
		inner, err := ps.parseNot()
		if err != nil {
			return nil, err
		}
		return func(v []any) bool { return !inner(v) }, nil
	}
	return ps.parsePredicate()
}

var containsFuncs = map[string]string{
	"json_contains": "one", "json_contains_any": "any", "json_contains_all": "all",
	"array_contains": "one", "array_contains_any": "any", "array_contains_all": "all",
}

func (ps *parser) parsePredicate() (predicate, error) {
	t := ps.peek()
	if t.kind == "(" {
		ps.next()
		inner, err := ps.parseOr()
		if err != nil {
			return nil, err
		}
		if _, err := ps.expect(")"); err != nil {
			return nil, err
		}
		return inner, nil
	}
	if ps.keyword("exists") {
		ps.next()
		o, err := ps.parseOperand()
		if err != nil {
			return nil, err
		}
		return func(v []any) bool { _, ok := o.eval(v); return ok }, nil
	}
	if t.kind == "ident" && ps.toks[ps.p+1].kind == "(" {
		mode, ok := containsFuncs[strings.ToLower(t.text)]
		if !ok {
			return nil, fmt.Errorf("function %s is not supported", t.text)
		}
		return ps.parseContains(mode)
	}
	left, err := ps.parseOperand()
	if err != nil {
		return nil, err
	}
	n := ps.peek()
	switch {
	case n.kind == "op" && (n.text == "==" || n.text == "!=" || n.text == "<" || n.text == "<=" || n.text == ">" || n.text == ">="):
		ps.next()
		right, err := ps.parseOperand()
		if err != nil {
			return nil, err
		}
		return comparison(n.text, left, right)
	case ps.keyword("in"):
		ps.next()
		return ps.parseIn(left, false)
	case ps.keyword("not"):
		ps.next()
		if !ps.keyword("in") {
			return nil, fmt.Errorf("expected in after not at %d", n.pos)
		}
		ps.next()
		return ps.parseIn(left, true)
	case ps.keyword("like"):
		ps.next()
		pat, err := ps.expect("string")
		if err != nil {
			return nil, err
		}
		if left.kind != kindString && left.kind != kindAny {
			return nil, fmt.Errorf("like can only be applied to a string")
		}
		re, err := likeRegexp(pat.text)
		if err != nil {
			return nil, err
		}
		return func(v []any) bool {
			x, ok := left.eval(v)
			s, isStr := x.(string)
			return ok && isStr && re.MatchString(s)
		}, nil
	case ps.keyword("is"):
		ps.next()
		negate := false
		if ps.keyword("not") {
			ps.next()
			negate = true
		}
		if !ps.keyword("null") {
			return nil, fmt.Errorf("expected null at %d", ps.peek().pos)
		}
		ps.next()
		return func(v []any) bool { _, ok := left.eval(v); return ok == negate }, nil
	}
	if left.kind == kindBool || left.kind == kindAny {
		return func(v []any) bool { x, ok := left.eval(v); b, isBool := x.(bool); return ok && isBool && b }, nil
	}
	return nil, fmt.Errorf("expression is not a predicate at %d", n.pos)
}

func (ps *parser) parseContains(mode string) (predicate, error) {
	ps.next()
	ps.next() // (
	path, err := ps.parseOperand()
	if err != nil {
		return nil, err
	}
	if _, err := ps.expect(","); err != nil {
		return nil, err
	}
	arg, err := ps.parseOperand()
	if err != nil {
		return nil, err
	}
	if _, err := ps.expect(")"); err != nil {
		return nil, err
	}
	if mode != "one" && arg.kind != kindList {
		return nil, fmt.Errorf("json_contains_%s needs a list", mode)
	}
	return func(v []any) bool {
		x, ok := path.eval(v)
		arr, isArr := x.([]any)
		if !ok || !isArr {
			return false
		}
		want, _ := arg.eval(v)
		has := func(w any) bool {
			for _, e := range arr {
				if equalValues(e, w) {
					return true
				}
			}
			return false
		}
		switch mode {
		case "one":
			return has(want)
		case "any":
			for _, w := range want.([]any) {
				if has(w) {
					return true
				}
			}
			return false
		default:
			for _, w := range want.([]any) {
				if !has(w) {
					return false
				}
			}
			return true
		}
	}, nil
}

func (ps *parser) parseIn(left opnd, negate bool) (predicate, error) {
	list, err := ps.parseOperand()
	if err != nil {
		return nil, err
	}
	if list.kind != kindList {
		return nil, fmt.Errorf("the right operand of in must be a list")
	}
	items, _ := list.eval(nil)
	elems := items.([]any)
	for _, e := range elems {
		if err := checkKinds(left, kindOf(e)); err != nil {
			return nil, err
		}
	}
	// Index string and integer members for the common "pk in [...]".
	strs := make(map[string]bool)
	ints := make(map[int64]bool)
	var others []any
	for _, e := range elems {
		switch x := e.(type) {
		case string:
			strs[x] = true
		case int64:
			ints[x] = true
		default:
			others = append(others, e)
		}
	}
	return func(v []any) bool {
		x, ok := left.eval(v)
		if !ok {
			return false
		}
		found := false
		switch y := normalize(x).(type) {
		case string:
			found = strs[y]
		case int64:
			found = ints[y]
			if !found {
				for _, o := range others {
					if equalValues(y, o) {
						found = true
						break
					}
				}
			}
		default:
			for _, e := range elems {
				if equalValues(y, e) {
					found = true
					break
				}
			}
		}
		return found != negate
	}, nil
}

func (ps *parser) parseOperand() (opnd, error) {
	t := ps.next()
	switch t.kind {
	case "string":
		s := t.text
		return literal(s), nil
	case "number":
		return numberLiteral(t.text, false)
	case "op":
		if t.text == "-" || t.text == "+" {
			n, err := ps.expect("number")
			if err != nil {
				return opnd{}, err
			}
			return numberLiteral(n.text, t.text == "-")
		}
	case "[":
		var items []any
		for ps.peek().kind != "]" {
			o, err := ps.parseOperand()
			if err != nil {
				return opnd{}, err
			}
			if !o.lit {
				return opnd{}, fmt.Errorf("list members must be literals at %d", t.pos)
			}
			v, _ := o.eval(nil)
			items = append(items, v)
			if ps.peek().kind == "," {
				ps.next()
				continue
			}
			if ps.peek().kind != "]" {
				return opnd{}, fmt.Errorf("expected , or ] at %d", ps.peek().pos)
			}
		}
		ps.next()
		if items == nil {
			items = []any{}
		}
		return opnd{eval: func([]any) (any, bool) { return items, true }, kind: kindList, lit: true}, nil
	case "template":
		tv, ok := ps.tmpl[t.text]
		if !ok {
			return opnd{}, fmt.Errorf("the value of expression template variable name {%s} is not found", t.text)
		}
		v, err := templateValue(tv)
		if err != nil {
			return opnd{}, err
		}
		return literal(v), nil
	case "ident":
		switch strings.ToLower(t.text) {
		case "true":
			return literal(true), nil
		case "false":
			return literal(false), nil
		}
		return ps.parsePath(t)
	}
	return opnd{}, fmt.Errorf("unexpected %q at %d", t.text, t.pos)
}

func literal(v any) opnd {
	return opnd{eval: func([]any) (any, bool) { return v, true }, kind: kindOf(v), lit: true}
}

func numberLiteral(text string, neg bool) (opnd, error) {
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		if neg {
			i = -i
		}
		return literal(i), nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return opnd{}, fmt.Errorf("bad number %q", text)
	}
	if neg {
		f = -f
	}
	return literal(f), nil
}

// parsePath parses a field reference with optional JSON subscripts.
func (ps *parser) parsePath(t token) (opnd, error) {
	c := ps.coll
	f, pos, ok := c.field(t.text)
	var keys []any
	if !ok {
		if c.dynamic < 0 {
			return opnd{}, fmt.Errorf("field %s not exist", t.text)
		}
		f, pos = c.fields[c.dynamic], c.dynamic
		keys = append(keys, t.text)
	}
	for ps.peek().kind == "[" {
		ps.next()
		k := ps.next()
		switch k.kind {
		case "string":
			keys = append(keys, k.text)
		case "number":
			n, err := strconv.Atoi(k.text)
			if err != nil {
				return opnd{}, fmt.Errorf("bad index %q", k.text)
			}
			keys = append(keys, n)
		default:
			return opnd{}, fmt.Errorf("bad subscript at %d", k.pos)
		}
		if _, err := ps.expect("]"); err != nil {
			return opnd{}, err
		}
	}
	if isVector(f.GetDataType()) {
		return opnd{}, fmt.Errorf("vector field %s cannot be used in an expression", f.GetName())
	}
	if len(keys) > 0 && f.GetDataType() != schemapb.DataType_JSON {
		return opnd{}, fmt.Errorf("field %s of type %s cannot be subscripted", f.GetName(), f.GetDataType())
	}
	if f.GetDataType() == schemapb.DataType_JSON {
		return opnd{eval: func(v []any) (any, bool) {
			j, ok := v[pos].(*jsonValue)
			if !ok {
				return nil, false
			}
			x := j.v
			for _, k := range keys {
				switch kk := k.(type) {
				case string:
					m, ok := x.(map[string]any)
					if !ok {
						return nil, false
					}
					if x, ok = m[kk]; !ok {
						return nil, false
					}
				case int:
					a, ok := x.([]any)
					if !ok || kk < 0 || kk >= len(a) {
						return nil, false
					}
					x = a[kk]
				}
			}
			if x == nil {
				return nil, false
			}
			return normalize(x), true
		}, kind: kindAny}, nil
	}
	k := kindAny
	switch f.GetDataType() {
	case schemapb.DataType_VarChar:
		k = kindString
	case schemapb.DataType_Bool:
		k = kindBool
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64,
		schemapb.DataType_Float, schemapb.DataType_Double:
		k = kindNumber
	}
	return opnd{eval: func(v []any) (any, bool) {
		x := v[pos]
		if x == nil {
			return nil, false
		}
		return normalize(x), true
	}, kind: k, field: f.GetName()}, nil
}

func templateValue(tv *schemapb.TemplateValue) (any, error) {
	switch v := tv.GetVal().(type) {
	case *schemapb.TemplateValue_BoolVal:
		return v.BoolVal, nil
	case *schemapb.TemplateValue_Int64Val:
		return v.Int64Val, nil
	case *schemapb.TemplateValue_FloatVal:
		return v.FloatVal, nil
	case *schemapb.TemplateValue_StringVal:
		return v.StringVal, nil
	case *schemapb.TemplateValue_ArrayVal:
		var out []any
		a := v.ArrayVal
		switch {
		case a.GetLongData() != nil:
			for _, x := range a.GetLongData().GetData() {
				out = append(out, x)
			}
		case a.GetDoubleData() != nil:
			for _, x := range a.GetDoubleData().GetData() {
				out = append(out, x)
			}
		case a.GetStringData() != nil:
			for _, x := range a.GetStringData().GetData() {
				out = append(out, x)
			}
		case a.GetBoolData() != nil:
			for _, x := range a.GetBoolData().GetData() {
				out = append(out, x)
			}
		default:
			return nil, fmt.Errorf("unsupported template array")
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported template value")
}

func kindOf(v any) kind {
	switch v.(type) {
	case string:
		return kindString
	case int64, float64:
		return kindNumber
	case bool:
		return kindBool
	case []any:
		return kindList
	}
	return kindAny
}

// checkKinds rejects comparing a typed scalar field with a literal of
// another type, as Milvus's parser does.
func checkKinds(o opnd, lit kind) error {
	if o.kind == kindAny || lit == kindAny || o.kind == lit {
		return nil
	}
	return fmt.Errorf("cannot compare %s with a %s value", describeOperand(o), kindName(lit))
}

func describeOperand(o opnd) string {
	if o.field != "" {
		return "field " + o.field + " (" + kindName(o.kind) + ")"
	}
	return kindName(o.kind)
}

func kindName(k kind) string {
	return [...]string{"json", "string", "number", "bool", "list"}[k]
}

func comparison(op string, l, r opnd) (predicate, error) {
	if l.kind != kindAny && r.kind != kindAny && l.kind != r.kind {
		return nil, checkKinds(l, r.kind)
	}
	if (l.kind == kindBool || r.kind == kindBool) && op != "==" && op != "!=" {
		return nil, fmt.Errorf("%s is not defined on bool values", op)
	}
	return func(v []any) bool {
		a, ok := l.eval(v)
		if !ok {
			return false
		}
		b, ok := r.eval(v)
		if !ok {
			return false
		}
		c, ok := compareValues(a, b)
		if !ok {
			return false
		}
		switch op {
		case "==":
			return c == 0
		case "!=":
			return c != 0
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		default:
			return c >= 0
		}
	}, nil
}

// normalize maps stored and JSON values onto the literal types: int64,
// float64, string, bool, []any, map[string]any.
func normalize(x any) any {
	switch v := x.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case float32:
		return float64(v)
	case *jsonValue:
		return normalize(v.v)
	}
	return x
}

// compareValues orders two normalized values of the same type; ok is false
// for values of different types, which compare as neither equal nor
// ordered. Booleans order false before true only for equality's sake.
func compareValues(a, b any) (int, bool) {
	a, b = normalize(a), normalize(b)
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpOrdered(x, y), true
		case float64:
			return cmpFloat(float64(x), y)
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return cmpFloat(x, float64(y))
		case float64:
			return cmpFloat(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	case bool:
		if y, ok := b.(bool); ok {
			switch {
			case x == y:
				return 0, true
			case !x:
				return -1, true
			}
			return 1, true
		}
	}
	return 0, false
}

func equalValues(a, b any) bool {
	c, ok := compareValues(a, b)
	return ok && c == 0
}

func cmpOrdered[T int64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) (int, bool) {
	if math.IsNaN(a) || math.IsNaN(b) {
		return 0, false
	}
	switch {
	case a < b:
		return -1, true
	case a > b:
		return 1, true
	}
	return 0, true
}

// likeRegexp translates a LIKE pattern: % matches any run, _ one
// character, and a backslash escapes either.
func likeRegexp(pat string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	escaped := false
	for _, c := range pat {
		switch {
		case escaped:
			b.WriteString(regexp.QuoteMeta(string(c)))
			escaped = false
		case c == '\\':
			escaped = true
		case c == '%':
			b.WriteString(`.*`)
		case c == '_':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if escaped {
		b.WriteString(regexp.QuoteMeta(`\`))
	}
	b.WriteString(`)$`)
	return regexp.Compile(b.String())
}
