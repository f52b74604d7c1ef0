package contracts

import (
	"cmp"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The canonical codec's values of no fixed type: the unknown keys a
// struct keeps (Extra), the sprint's metrics, an anomaly's details, and
// the maps and lists of structs a seed-format state holds. The library
// writes a map's keys in an order of its own (letters after the other
// characters, runs of digits by their value); the keys handled here are
// those orderedKey takes, whose order keyOrder works out.

// anyValue writes a value of no fixed type after a key's colon, or a
// sequence's dash, whose line starts at column indent.
func (e *canonEncoder) anyValue(v reflect.Value, indent int) bool {
	for v.Kind() == reflect.Interface {
		if v.IsNil() {
			e.buf = append(e.buf, " null\n"...)
			return true
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return false // the library writes null, or follows it
		}
		v = v.Elem()
	}
	if custom(v.Type()) {
		return false
	}
	switch v.Kind() {
	case reflect.Struct:
		return e.nested(planFor(v.Type()), v, indent+2)
	case reflect.Map:
		return e.anyMap(v, indent)
	case reflect.Slice:
		if v.Len() == 0 {
			e.buf = append(e.buf, " []\n"...)
			return true
		}
		e.buf = append(e.buf, '\n')
		return e.items(v, indent+2)
	case reflect.String:
		return e.scalar(v.String(), indent)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf = append(e.buf, ' ')
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		e.buf = append(e.buf, ' ')
		e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
	case reflect.Bool:
		e.buf = append(e.buf, ' ')
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case reflect.Float64:
		x := v.Float()
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return false
		}
		e.buf = append(e.buf, ' ')
		e.buf = strconv.AppendFloat(e.buf, x, 'g', -1, 64)
	default:
		return false
	}
	e.buf = append(e.buf, '\n')
	return true
}

// items writes the items of slice v, their dashes at column col: a
// scalar after the dash, a map's entries from it on.
func (e *canonEncoder) items(v reflect.Value, col int) bool {
	if v.Type().Elem().Kind() == reflect.Uint8 {
		return false
	}
	for i := 0; i < v.Len(); i++ {
		item := v.Index(i)
		for item.Kind() == reflect.Interface && !item.IsNil() {
			item = item.Elem()
		}
		if item.Kind() == reflect.Pointer && !item.IsNil() && item.Elem().Kind() == reflect.Struct {
			item = item.Elem()
		}
		e.indent(col)
		switch item.Kind() {
		case reflect.Slice, reflect.Pointer:
			return false
		case reflect.Struct:
			p := planFor(item.Type())
			if p == nil {
				return false
			}
			e.buf = append(e.buf, "- "...)
			n, ok := e.mapping(p, item, col+2, true)
			if !ok {
				return false
			}
			if n == 0 {
				e.buf = append(e.buf, "{}\n"...)
			}
			continue
		case reflect.Map:
			if custom(item.Type()) {
				return false
			}
			if item.Len() == 0 {
				e.buf = append(e.buf, "- {}\n"...)
				continue
			}
			e.buf = append(e.buf, "- "...)
			if !e.entries(item, col+2, true, nil) {
				return false
			}
			continue
		}
		e.buf = append(e.buf, '-')
		if !e.anyValue(item, col) {
			return false
		}
	}
	return true
}

// anyMap writes a map with string keys as the value of a key: {} when it
// is empty, its entries on the lines after otherwise.
func (e *canonEncoder) anyMap(v reflect.Value, indent int) bool {
	if v.Len() == 0 {
		e.buf = append(e.buf, " {}\n"...)
		return true
	}
	e.buf = append(e.buf, '\n')
	return e.entries(v, indent+2, false, nil)
}

// entries writes the entries of map v, with keys at column indent (the
// first at the current position when inItem); none may be a key of
// fields.
func (e *canonEncoder) entries(v reflect.Value, indent int, inItem bool, fields []fieldPlan) bool {
	if v.Type().Key().Kind() != reflect.String || custom(v.Type().Key()) {
		return false
	}
	keys := make([]string, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		k := it.Key().String()
		if !orderedKey(k) {
			return false
		}
		for i := range fields {
			if fields[i].name == k {
				return false
			}
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, keyOrder)
	for i, k := range keys {
		text, literal, ok := renderScalar(k)
		if !ok || literal {
			return false
		}
		if i > 0 || !inItem {
			e.indent(indent)
		}
		e.buf = append(e.buf, text...)
		e.buf = append(e.buf, ':')
		if !e.anyValue(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())), indent) {
			return false
		}
	}
	return true
}

// orderedKey reports whether k is a key whose place the library gives
// by keyOrder: printable ASCII, at most 128 bytes (a longer key is written
// as a complex key), and with no digit but, perhaps, a number at its end
// after a dash, with no leading zero (an agent's id: coder-12).
func orderedKey(k string) bool {
	if k == "" || len(k) > 128 || !printableASCII(k) {
		return false
	}
	d := strings.IndexAny(k, "0123456789")
	if d < 0 {
		return true
	}
	if d == 0 || k[d-1] != '-' || k[d] == '0' {
		return false
	}
	for i := d; i < len(k); i++ {
		if !isDigit(k[i]) {
			return false
		}
	}
	return true
}

// keyOrder orders two keys of orderedKey's as the library does: at the
// first byte where they differ, a letter goes after anything that is not
// one; two numbers go by their value, and a number after anything else;
// otherwise the bytes' order decides. A key goes before the longer keys it
// starts.
func keyOrder(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		al, bl := isLetter(a[i]), isLetter(b[i])
		ad, bd := isDigit(a[i]), isDigit(b[i])
		switch {
		case al != bl:
			if al {
				return 1
			}
			return -1
		case ad && bd:
			// Both in the numbers that end the keys, which start at the
			// same place and have no leading zero.
			return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
		case ad != bd:
			if ad {
				return 1
			}
			return -1
		}
		return int(a[i]) - int(b[i])
	}
	return len(a) - len(b)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// anyValue reads a value of no fixed type: rest is what follows the key's
// colon on its line, whose key is at column indent.
func (d *canonDecoder) anyValue(rest string, indent int) (any, bool) {
	switch rest {
	case " {}":
		return map[string]any{}, true
	case " []":
		return []any{}, true
	case "":
		line, _ := d.line()
		if d.pos >= len(d.data) || indentOf(line) != indent+2 {
			return nil, false
		}
		if strings.HasPrefix(line[indent+2:], "- ") {
			return d.items(indent + 2)
		}
		m := map[string]any{}
		if !d.entries(m, indent+2, false) {
			return nil, false
		}
		return m, true
	}
	return d.anyScalar(rest, indent)
}

// items reads the items of a sequence of no fixed type, their dashes at
// column col: scalars, and maps whose first key follows the dash.
func (d *canonDecoder) items(col int) ([]any, bool) {
	var items []any
	for d.pos < len(d.data) && col <= maxCanonIndent {
		line, next := d.line()
		if indentOf(line) != col || !strings.HasPrefix(line[col:], "- ") {
			break
		}
		after := line[col+2:]
		if after == "{}" {
			d.pos = next
			items = append(items, map[string]any{})
			continue
		}
		if _, rest, ok := splitKey(after); ok && (rest == "" || rest[0] == ' ') {
			d.pos += col + 2
			m := map[string]any{}
			if !d.entries(m, col+2, true) {
				return nil, false
			}
			items = append(items, m)
			continue
		}
		d.pos = next
		x, ok := d.anyScalar(line[col+1:], col)
		if !ok {
			return nil, false
		}
		items = append(items, x)
	}
	if len(items) == 0 {
		return nil, false
	}
	return items, true
}

// entries reads the entries of a map of no fixed type into m, their keys
// at column indent; it reads at least one.
func (d *canonDecoder) entries(m map[string]any, indent int, inItem bool) bool {
	n := 0
	for d.pos < len(d.data) && indent <= maxCanonIndent && n < MaxMappingKeys {
		line, next := d.line()
		if n > 0 || !inItem {
			if indentOf(line) != indent {
				return n > 0 && indentOf(line) < indent && strings.TrimSpace(line) != ""
			}
			line = line[indent:]
		}
		key, rest, ok := splitKey(line)
		if !ok || !orderedKey(key) {
			return false
		}
		if _, dup := m[key]; dup {
			return false
		}
		d.pos = next
		x, ok := d.anyValue(rest, indent)
		if !ok {
			return false
		}
		m[key] = x
		n++
	}
	return n > 0
}

// anyScalar reads a scalar of no fixed type: a string as scalar reads
// one, or an integer, a bool or a float as strconv writes them.
func (d *canonDecoder) anyScalar(rest string, indent int) (any, bool) {
	t, ok := strings.CutPrefix(rest, " ")
	if !ok || t == "" {
		return nil, false
	}
	switch {
	case t[0] == '"' || t[0] == '\'' || t[0] == '|':
		return d.scalar(rest, indent)
	case t == "null":
		return nil, true
	case t == "true" || t == "false":
		return t == "true", true
	case canonInt(t):
		x, err := strconv.ParseInt(t, 10, 64)
		if err != nil || int64(int(x)) != x {
			return nil, false
		}
		return int(x), true
	}
	if plainResolvesToStr(t) {
		return d.scalar(rest, indent)
	}
	if t == "-0" || t[0] == '.' || t[0] == '+' || !floatSyntax(t) {
		return nil, false
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || strconv.FormatFloat(x, 'g', -1, 64) != t {
		return nil, false
	}
	return x, true
}

// valueOf is x as a value of type t (an interface type, or, for nil, any
// type whose zero is null).
func valueOf(x any, t reflect.Type) reflect.Value {
	if x == nil {
		return reflect.Zero(t)
	}
	return reflect.ValueOf(x)
}
