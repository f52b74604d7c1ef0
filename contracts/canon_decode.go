package contracts

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
)

// decodeCanon reads data into v (a pointer to a zero struct) when data is
// in the form encodeCanon writes, and reports whether it did; v is left
// as it was when it did not, and the caller then uses the library.
func decodeCanon(data []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || len(data) == 0 || bytes.IndexByte(data, '\t') >= 0 || bytes.IndexByte(data, '\r') >= 0 {
		return false
	}
	if e := rv.Elem(); !e.IsZero() && (e.Kind() != reflect.Map || e.Len() > 0) {
		return false // the library decodes into what is there
	}
	if rv.Elem().Kind() != reflect.Struct {
		return decodeTop(data, rv.Elem())
	}
	p := planFor(rv.Elem().Type())
	if p == nil {
		return false
	}
	d := canonDecoder{data: data}
	out := reflect.New(p.typ).Elem()
	if !d.mapping(p, out, 0, false) || d.pos != len(d.data) {
		return false
	}
	rv.Elem().Set(out)
	return true
}

// decodeTop reads a document that is not a struct into v: a map of string
// keys to interfaces, or a slice of interfaces.
func decodeTop(data []byte, v reflect.Value) bool {
	t := v.Type()
	if custom(t) {
		return false
	}
	d := canonDecoder{data: data}
	switch {
	case t.Kind() == reflect.Map && t.Key() == reflect.TypeFor[string]() && t.Elem().Kind() == reflect.Interface && t.Elem().NumMethod() == 0:
		m := map[string]any{}
		if string(data) != "{}\n" && (!d.entries(m, 0, false) || d.pos != len(data)) {
			return false
		}
		out := v
		if out.IsNil() {
			out = reflect.MakeMapWithSize(t, len(m))
		}
		for k, x := range m {
			out.SetMapIndex(reflect.ValueOf(k), valueOf(x, t.Elem()))
		}
		v.Set(out)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Interface && t.Elem().NumMethod() == 0:
		items := []any{}
		if string(data) != "[]\n" {
			var ok bool
			if items, ok = d.items(0); !ok || d.pos != len(data) {
				return false
			}
		}
		out := reflect.MakeSlice(t, len(items), len(items))
		for i, x := range items {
			out.Index(i).Set(valueOf(x, t.Elem()))
		}
		v.Set(out)
	default:
		return false
	}
	return true
}

// maxCanonIndent bounds the nesting the canonical codec reads (64 levels);
// the library's own bound is 10,000, and its decoder refuses a mapping of
// more than MaxMappingKeys keys: such documents are the library's, which
// says what is wrong with them.
const maxCanonIndent = 128

// canonDecoder reads a document line by line; pos is where the next line
// starts, or, within a sequence's item, where its first key starts.
type canonDecoder struct {
	data []byte
	pos  int
}

// line is the line at pos without its end, and where the next one starts.
func (d *canonDecoder) line() (string, int) {
	rest := d.data[d.pos:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		return string(rest[:i]), d.pos + i + 1
	}
	return string(rest), len(d.data)
}

// indentOf is the number of spaces a line starts with.
func indentOf(line string) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// mapping reads the fields of a struct of plan p into v, their keys at
// column indent; inItem when pos is at the first key of a sequence's item.
// It reads at least one field.
func (d *canonDecoder) mapping(p *structPlan, v reflect.Value, indent int, inItem bool) bool {
	var seen uint64
	n := 0
	for d.pos < len(d.data) && indent <= maxCanonIndent && n < MaxMappingKeys {
		line, next := d.line()
		if n > 0 || !inItem {
			if indentOf(line) != indent {
				if indentOf(line) < indent && n > 0 && strings.TrimSpace(line) != "" {
					return true
				}
				return false
			}
			line = line[indent:]
		}
		key, rest, ok := splitKey(line)
		if !ok {
			return false
		}
		fi := p.field(key)
		if fi < 0 {
			if !d.extra(p, v, key, rest, indent, next) {
				return false
			}
			n++
			continue
		}
		if fi >= 64 || seen&(1<<fi) != 0 {
			return false
		}
		seen |= 1 << fi
		n++
		d.pos = next
		if !d.value(&p.fields[fi], v.Field(p.fields[fi].num), rest, indent) {
			return false
		}
	}
	return n > 0
}

// extra reads an unknown key's value into the struct's map of them
// (Extra), when it has one; pos is at the key's line, and next after it.
func (d *canonDecoder) extra(p *structPlan, v reflect.Value, key, rest string, indent, next int) bool {
	if p.inline < 0 || !orderedKey(key) {
		return false
	}
	m := v.Field(p.inline)
	if m.IsNil() {
		m.Set(reflect.MakeMap(m.Type()))
	}
	if m.MapIndex(reflect.ValueOf(key)).IsValid() {
		return false
	}
	d.pos = next
	x, ok := d.anyValue(rest, indent)
	if !ok {
		return false
	}
	m.SetMapIndex(reflect.ValueOf(key), valueOf(x, m.Type().Elem()))
	return true
}

// splitKey splits a line of a mapping into its key, read, and what
// follows the key's colon. The key must be written as the canonical codec
// writes it: plain, or quoted when the library quotes it.
func splitKey(line string) (key, rest string, ok bool) {
	end := 0
	switch {
	case strings.HasPrefix(line, `"`):
		if i := strings.IndexByte(line[1:], '"'); i >= 0 {
			end = i + 2
		}
	case strings.HasPrefix(line, "'"):
		for i := 1; i < len(line); i++ {
			if line[i] == '\'' {
				if i+1 < len(line) && line[i+1] == '\'' {
					i++
					continue
				}
				end = i + 1
				break
			}
		}
	default:
		// A plain key ends at the first colon followed by a space or by
		// the line's end: it may hold others (plainAllowed).
		end = strings.Index(line, ": ")
		if end < 0 && strings.HasSuffix(line, ":") {
			end = len(line) - 1
		}
	}
	if end <= 0 || end >= len(line) || line[end] != ':' {
		return "", "", false
	}
	text := line[:end]
	switch text[0] {
	case '"':
		key = text[1 : len(text)-1]
	case '\'':
		key = strings.ReplaceAll(text[1:len(text)-1], "''", "'")
	default:
		key = text
	}
	if r, literal, ok := renderScalar(key); !ok || literal || r != text {
		return "", "", false
	}
	return key, line[end+1:], true
}

// field is the index of the field named key, -1 when none.
func (p *structPlan) field(key string) int {
	for i := range p.fields {
		if p.fields[i].name == key {
			return i
		}
	}
	return -1
}

// value reads a field's value: rest is what follows the key's colon on
// its line, and pos is at the next line.
func (d *canonDecoder) value(f *fieldPlan, v reflect.Value, rest string, indent int) bool {
	switch f.kind {
	case kindString:
		s, ok := d.scalar(rest, indent)
		if ok {
			v.SetString(s)
		}
		return ok
	case kindInt:
		t, ok := strings.CutPrefix(rest, " ")
		if !ok || !canonInt(t) {
			return false
		}
		x, err := strconv.ParseInt(t, 10, v.Type().Bits())
		if err != nil {
			return false
		}
		v.SetInt(x)
	case kindBool:
		switch rest {
		case " true":
			v.SetBool(true)
		case " false":
		default:
			return false
		}
	case kindFloat:
		t, ok := strings.CutPrefix(rest, " ")
		if !ok || t == "" || t == "-0" || t[0] == '.' || t[0] == '+' {
			return false
		}
		x, err := strconv.ParseFloat(t, 64)
		if err != nil || strconv.FormatFloat(x, 'g', -1, 64) != t {
			return false
		}
		v.SetFloat(x)
	case kindStrings:
		if rest == " []" {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return true
		}
		if rest != "" || f.flow {
			return false
		}
		var items []string
		for d.pos < len(d.data) {
			line, next := d.line()
			if indentOf(line) != indent+2 || !strings.HasPrefix(line[indent+2:], "- ") {
				break
			}
			d.pos = next
			s, ok := d.scalar(line[indent+3:], indent+2)
			if !ok {
				return false
			}
			items = append(items, s)
		}
		return setItems(v, len(items), func(i int, e reflect.Value) { e.SetString(items[i]) })
	case kindInts:
		return d.ints(v, rest, indent)
	case kindStruct, kindStructPtr:
		sub := f.sub()
		if sub == nil {
			return false
		}
		if f.kind == kindStructPtr {
			v.Set(reflect.New(sub.typ))
			v = v.Elem()
		}
		if rest == " {}" {
			return true
		}
		return rest == "" && d.mapping(sub, v, indent+2, false)
	case kindStructPtrs:
		if rest == " []" {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return true
		}
		sub := f.sub()
		if rest != "" || f.flow || sub == nil {
			return false
		}
		var items []reflect.Value
		for d.pos < len(d.data) {
			line, _ := d.line()
			if indentOf(line) != indent+2 || !strings.HasPrefix(line[indent+2:], "- ") {
				break
			}
			item := reflect.New(sub.typ)
			if line[indent+4:] == "{}" {
				_, d.pos = d.line()
			} else {
				d.pos += indent + 4
				if !d.mapping(sub, item.Elem(), indent+4, true) {
					return false
				}
			}
			items = append(items, item)
		}
		return setItems(v, len(items), func(i int, e reflect.Value) { e.Set(items[i]) })
	case kindAny:
		x, ok := d.anyValue(rest, indent)
		if !ok {
			return false
		}
		xv := valueOf(x, v.Type())
		if !xv.Type().AssignableTo(v.Type()) {
			return false
		}
		v.Set(xv)
	default:
		return false
	}
	return true
}

// ints reads a slice of integers, written in flow ([1, 2]) or in block
// style.
func (d *canonDecoder) ints(v reflect.Value, rest string, indent int) bool {
	var items []string
	switch {
	case strings.HasPrefix(rest, " [") && strings.HasSuffix(rest, "]"):
		if inner := rest[2 : len(rest)-1]; inner != "" {
			items = strings.Split(inner, ", ")
		}
	case rest == "":
		for d.pos < len(d.data) {
			line, next := d.line()
			t, ok := strings.CutPrefix(line, strings.Repeat(" ", indent+2)+"- ")
			if !ok {
				break
			}
			items = append(items, t)
			d.pos = next
		}
		if len(items) == 0 {
			return false
		}
	default:
		return false
	}
	l := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, t := range items {
		if !canonInt(t) {
			return false
		}
		x, err := strconv.ParseInt(t, 10, v.Type().Elem().Bits())
		if err != nil {
			return false
		}
		l.Index(i).SetInt(x)
	}
	v.Set(l)
	return true
}

// setItems sets slice v to n items (at least one), the i-th set by set.
func setItems(v reflect.Value, n int, set func(i int, e reflect.Value)) bool {
	if n == 0 {
		return false
	}
	l := reflect.MakeSlice(v.Type(), n, n)
	for i := range n {
		set(i, l.Index(i))
	}
	v.Set(l)
	return true
}

// canonInt reports whether t is an integer as strconv writes it.
func canonInt(t string) bool {
	u := strings.TrimPrefix(t, "-")
	if u == "" || u[0] == '0' && (len(u) > 1 || len(t) > 1) {
		return false
	}
	for i := 0; i < len(u); i++ {
		if u[i] < '0' || u[i] > '9' {
			return false
		}
	}
	return true
}

// scalar reads a string: rest is what follows the colon or the dash on its
// line, whose key or dash is at column indent; a literal block's lines
// follow at pos.
func (d *canonDecoder) scalar(rest string, indent int) (string, bool) {
	t, ok := strings.CutPrefix(rest, " ")
	if !ok || t == "" || !printableASCII(t) {
		return "", false
	}
	switch t[0] {
	case '"':
		s, ok := strings.CutPrefix(t[:len(t)-1], `"`)
		if !ok || len(t) < 2 || t[len(t)-1] != '"' || strings.ContainsAny(s, `"\`) {
			return "", false
		}
		return s, true
	case '\'':
		if len(t) < 2 || t[len(t)-1] != '\'' {
			return "", false
		}
		s := t[1 : len(t)-1]
		if strings.Count(s, "'") != 2*strings.Count(s, "''") {
			return "", false
		}
		return strings.ReplaceAll(s, "''", "'"), true
	case '|':
		if t != "|" && t != "|-" {
			return "", false
		}
		return d.literal(indent+2, t == "|")
	}
	if !plainResolvesToStr(t) || !plainAllowed(t) {
		return "", false
	}
	return t, true
}

// literal reads a literal block's lines at column indent: the first not
// empty, none empty at the end, none of spaces alone, each ending with a
// line break.
func (d *canonDecoder) literal(indent int, clip bool) (string, bool) {
	var lines []string
	for d.pos < len(d.data) {
		line, next := d.line()
		if d.data[next-1] != '\n' {
			return "", false // the block's last line has no end
		}
		if line == "" {
			if len(lines) == 0 {
				return "", false
			}
			lines = append(lines, "")
			d.pos = next
			continue
		}
		if strings.TrimLeft(line, " ") == "" {
			return "", false // a line of spaces: YAML reads it by rules not modelled here
		}
		if indentOf(line) < indent {
			break
		}
		if len(lines) == 0 && indentOf(line) != indent {
			return "", false
		}
		if !printableASCII(line) {
			return "", false
		}
		lines = append(lines, line[indent:])
		d.pos = next
	}
	if len(lines) == 0 || lines[len(lines)-1] == "" {
		return "", false
	}
	s := strings.Join(lines, "\n")
	if clip {
		s += "\n"
	}
	return s, true
}
