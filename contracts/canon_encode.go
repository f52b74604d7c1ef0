package contracts

import (
	"math"
	"reflect"
	"strconv"
	"strings"
)

// encodeCanon writes v (a struct or a pointer to one) as the library
// would, with a 2-space indent; ok is false when some part of v is not in
// a form this codec writes (see canon.go), and the caller then uses the
// library.
func encodeCanon(v any) (out []byte, ok bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, false
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return encodeTop(rv)
	}
	p := planFor(rv.Type())
	if p == nil {
		return nil, false
	}
	e := canonEncoder{buf: make([]byte, 0, 1024)}
	n, ok := e.mapping(p, rv, 0, false)
	if !ok {
		return nil, false
	}
	if n == 0 {
		e.buf = append(e.buf, "{}\n"...)
	}
	return e.buf, true
}

// encodeTop writes a document that is not a struct: a map, a sequence or
// a scalar of one line.
func encodeTop(v reflect.Value) ([]byte, bool) {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() || v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer || custom(v.Type()) {
		return nil, false
	}
	e := canonEncoder{buf: make([]byte, 0, 256)}
	switch v.Kind() {
	case reflect.Map:
		if v.Len() == 0 {
			return []byte("{}\n"), true
		}
		if !e.entries(v, 0, false, nil) {
			return nil, false
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return []byte("[]\n"), true
		}
		if !e.items(v, 0) {
			return nil, false
		}
	case reflect.String:
		text, literal, ok := renderScalar(v.String())
		if !ok || literal {
			return nil, false
		}
		e.buf = append(append(e.buf, text...), '\n')
	default:
		// a number or a bool, written after a space as in a mapping
		if !e.anyValue(v, 0) {
			return nil, false
		}
		e.buf = e.buf[1:]
	}
	return e.buf, true
}

type canonEncoder struct{ buf []byte }

func (e *canonEncoder) indent(n int) {
	for range n {
		e.buf = append(e.buf, ' ')
	}
}

// mapping writes the fields of v (of plan p) with their keys at column
// indent, the first at the current position when inItem (after a
// sequence's "- "); n is the number of fields written.
func (e *canonEncoder) mapping(p *structPlan, v reflect.Value, indent int, inItem bool) (n int, ok bool) {
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.Field(f.num)
		if f.omitEmpty && isZero(fv) {
			continue
		}
		if n > 0 || !inItem {
			e.indent(indent)
		}
		n++
		e.buf = append(e.buf, f.key...)
		e.buf = append(e.buf, ':')
		if !e.value(f, fv, indent) {
			return 0, false
		}
	}
	if p.inline >= 0 {
		if extra := v.Field(p.inline); extra.Len() > 0 {
			if !e.entries(extra, indent, inItem && n == 0, p.fields) {
				return 0, false
			}
			n += extra.Len()
		}
	}
	return n, true
}

// value writes a field's value after its key and colon, and the line's
// end.
func (e *canonEncoder) value(f *fieldPlan, v reflect.Value, indent int) bool {
	switch f.kind {
	case kindString:
		return e.scalar(v.String(), indent)
	case kindInt:
		e.buf = append(e.buf, ' ')
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
	case kindBool:
		e.buf = append(e.buf, ' ')
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case kindFloat:
		x := v.Float()
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return false
		}
		e.buf = append(e.buf, ' ')
		e.buf = strconv.AppendFloat(e.buf, x, 'g', -1, 64)
	case kindStrings:
		if v.Len() == 0 {
			e.buf = append(e.buf, " []"...)
			break
		}
		if f.flow {
			return false
		}
		e.buf = append(e.buf, '\n')
		for i := 0; i < v.Len(); i++ {
			e.indent(indent + 2)
			e.buf = append(e.buf, '-')
			if !e.scalar(v.Index(i).String(), indent+2) {
				return false
			}
		}
		return true
	case kindInts:
		if v.Len() == 0 {
			e.buf = append(e.buf, " []"...)
			break
		}
		if f.flow {
			e.buf = append(e.buf, " ["...)
			for i := 0; i < v.Len(); i++ {
				if i > 0 {
					e.buf = append(e.buf, ", "...)
				}
				e.buf = strconv.AppendInt(e.buf, v.Index(i).Int(), 10)
			}
			e.buf = append(e.buf, ']')
			break
		}
		for i := 0; i < v.Len(); i++ {
			e.buf = append(e.buf, '\n')
			e.indent(indent + 2)
			e.buf = append(e.buf, "- "...)
			e.buf = strconv.AppendInt(e.buf, v.Index(i).Int(), 10)
		}
	case kindStruct, kindStructPtr:
		if f.kind == kindStructPtr {
			if v.IsNil() {
				return false // the library writes null
			}
			v = v.Elem()
		}
		return e.nested(f.sub(), v, indent+2)
	case kindStructPtrs:
		if v.Len() == 0 {
			e.buf = append(e.buf, " []"...)
			break
		}
		sub := f.sub()
		if f.flow || sub == nil {
			return false
		}
		e.buf = append(e.buf, '\n')
		for i := 0; i < v.Len(); i++ {
			item := v.Index(i)
			if item.IsNil() {
				return false
			}
			e.indent(indent + 2)
			e.buf = append(e.buf, "- "...)
			n, ok := e.mapping(sub, item.Elem(), indent+4, true)
			if !ok {
				return false
			}
			if n == 0 {
				e.buf = append(e.buf, "{}\n"...)
			}
		}
		return true
	case kindAny, kindMap:
		return e.anyValue(v, indent)
	default:
		return false
	}
	e.buf = append(e.buf, '\n')
	return true
}

// nested writes a struct that is a mapping's value: on the lines after
// its key, or {} when it has no field to write.
func (e *canonEncoder) nested(p *structPlan, v reflect.Value, indent int) bool {
	if p == nil {
		return false
	}
	e.buf = append(e.buf, '\n')
	mark := len(e.buf)
	n, ok := e.mapping(p, v, indent, false)
	if !ok {
		return false
	}
	if n == 0 {
		e.buf = append(e.buf[:mark-1], " {}\n"...)
	}
	return true
}

// scalar writes a string after a key's colon or a sequence's dash, whose
// line starts at column indent, and the line's end.
func (e *canonEncoder) scalar(s string, indent int) bool {
	text, literal, ok := renderScalar(s)
	if !ok {
		return false
	}
	if !literal {
		e.buf = append(e.buf, ' ')
		e.buf = append(e.buf, text...)
		e.buf = append(e.buf, '\n')
		return true
	}
	e.buf = append(e.buf, " |"...)
	body := strings.TrimSuffix(s, "\n")
	if len(body) == len(s) {
		e.buf = append(e.buf, '-')
	}
	e.buf = append(e.buf, '\n')
	for line := range strings.SplitSeq(body, "\n") {
		if line != "" {
			e.indent(indent + 2)
			e.buf = append(e.buf, line...)
		}
		e.buf = append(e.buf, '\n')
	}
	return true
}
