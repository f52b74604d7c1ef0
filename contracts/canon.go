package contracts

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"
)

// The canonical codec: git-liza's own reader and writer for the YAML that
// EncodeYAML writes, beside the library. A short command (a claim, an
// add) decodes a few state files and encodes one or two, once each, in a
// process that has run no YAML before; in such a process the library's
// first decode and encode cost about half a millisecond, most of it the
// first touch of a large parser and emitter. The canonical codec is a
// small walk over the struct types' fields.
//
// It is exact or it steps aside. The encoder writes a value only when every
// part of it is in a form whose bytes are known to be the library's (block
// mappings and sequences, ints, bools, floats, and strings of printable
// ASCII in the styles the library picks for them); the decoder reads a
// document only when every line is in such a form. Anything else (a map,
// an unknown key, a comment, a tab, a character outside ASCII, a string
// the library would quote in a way not modelled here) falls back to the
// library, so that the bytes written and the values read are the
// library's, always: clones of two versions compare the bytes of the
// files they write (a replay re-encodes), and a difference would make
// them refuse each other's commits. canon_test.go checks both directions
// against the library, on the state files of a team's lifecycle and on
// fuzzed values and documents.

// fieldKind is the shape of a field the canonical codec handles.
type fieldKind uint8

const (
	kindOther      fieldKind = iota // anything else: the library's
	kindString                      // a string kind
	kindInt                         // a signed integer kind
	kindBool                        // bool
	kindFloat                       // float64
	kindStrings                     // []string or StringList
	kindInts                        // a slice of a signed integer kind
	kindStruct                      // a struct value
	kindStructPtr                   // a pointer to a struct
	kindStructPtrs                  // a slice of pointers to a struct
	kindAny                         // an interface, a map of string keys to interfaces, a slice of interfaces
	kindMap                         // another map of string keys: written, not read
)

// fieldPlan is how one field of a struct is written and read.
type fieldPlan struct {
	name      string // the key
	key       string // the key as written, before ':'
	num       int    // the field's index
	kind      fieldKind
	omitEmpty bool
	flow      bool
	elem      reflect.Type // the struct a struct kind holds
}

// sub is the plan of the struct the field holds, nil when the canonical
// codec does not handle it. It is made when first asked for: a file names
// few of the structs its type can hold.
func (f *fieldPlan) sub() *structPlan { return planFor(f.elem) }

// structPlan is how a struct type is written and read.
type structPlan struct {
	typ    reflect.Type
	fields []fieldPlan
	inline int // the field of unknown keys, -1 when none
}

var (
	plansMu sync.Mutex
	plans   = map[reflect.Type]*structPlan{}

	marshalerType     = reflect.TypeFor[yaml.Marshaler]()
	unmarshalerType   = reflect.TypeFor[yaml.Unmarshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalType = reflect.TypeFor[encoding.TextUnmarshaler]()
	zeroerType        = reflect.TypeFor[interface{ IsZero() bool }]()
	stringListType    = reflect.TypeFor[StringList]()
	stringsType       = reflect.TypeFor[[]string]()
	extraType         = reflect.TypeFor[Extra]()
	durationType      = reflect.TypeFor[time.Duration]()
	timeType          = reflect.TypeFor[time.Time]()
)

// planFor is the plan of struct type t, nil when the canonical codec does
// not handle t (an inline struct, an embedded field, a tag the library
// refuses, a type that marshals itself).
func planFor(t reflect.Type) *structPlan {
	plansMu.Lock()
	defer plansMu.Unlock()
	p, ok := plans[t]
	if !ok {
		p = &structPlan{typ: t, inline: -1}
		if !fillPlan(p) {
			p = nil
		}
		plans[t] = p
	}
	return p
}

// fillPlan reads t's fields as the library's getStructInfo does.
func fillPlan(p *structPlan) bool {
	t := p.typ
	if t.Kind() != reflect.Struct || custom(t) {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return false
		}
		if f.PkgPath != "" {
			continue
		}
		tag, ok := f.Tag.Lookup("yaml")
		if !ok {
			return false // the library reads a bare tag as the yaml one
		}
		if tag == "-" {
			continue
		}
		fp := fieldPlan{num: i}
		name, flags, _ := strings.Cut(tag, ",")
		inline := false
		for flags != "" {
			var flag string
			flag, flags, _ = strings.Cut(flags, ",")
			switch flag {
			case "omitempty":
				fp.omitEmpty = true
			case "flow":
				fp.flow = true
			case "inline":
				inline = true
			default:
				return false
			}
		}
		if inline {
			if f.Type != extraType || p.inline >= 0 {
				return false
			}
			p.inline = i
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		key, literal, ok := renderScalar(name)
		if !ok || literal || len(name) > 128 {
			return false
		}
		for _, other := range p.fields {
			if other.name == name {
				return false
			}
		}
		fp.name, fp.key = name, key
		fp.kind, fp.elem = kindOf(f.Type)
		p.fields = append(p.fields, fp)
	}
	return true
}

// custom reports whether t (or a pointer to it) marshals or unmarshals
// itself in a way the library honours.
func custom(t reflect.Type) bool {
	if t.Name() == "" && t.Kind() != reflect.Pointer {
		return false // no methods
	}
	if t == durationType || t == timeType {
		return true
	}
	return marshals(t) || t.Kind() != reflect.Pointer && marshals(reflect.PointerTo(t))
}

// marshals reports whether t has a method the library calls to write or
// read a value of it.
func marshals(t reflect.Type) bool {
	return t.NumMethod() > 0 && (t.Implements(marshalerType) || t.Implements(unmarshalerType) ||
		t.Implements(textMarshalerType) || t.Implements(textUnmarshalType))
}

// kindOf is the kind of a field of type t, and the struct type it holds
// when it holds one.
func kindOf(t reflect.Type) (fieldKind, reflect.Type) {
	if t == stringListType || t == stringsType {
		return kindStrings, nil
	}
	if custom(t) {
		return kindOther, nil
	}
	switch t.Kind() {
	case reflect.String:
		return kindString, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt, nil
	case reflect.Bool:
		return kindBool, nil
	case reflect.Float64:
		return kindFloat, nil
	case reflect.Struct:
		return kindStruct, t
	case reflect.Pointer:
		if e := t.Elem(); e.Kind() == reflect.Struct {
			return kindStructPtr, e
		}
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct && !custom(e) {
			return kindStructPtrs, e.Elem()
		}
		switch e := t.Elem(); e.Kind() {
		case reflect.Interface:
			return kindAny, nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if !custom(e) {
				return kindInts, nil
			}
		}
	case reflect.Interface:
		return kindAny, nil
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Interface {
			return kindAny, nil
		}
		if t.Key().Kind() == reflect.String {
			return kindMap, nil
		}
	}
	return kindOther, nil
}

// isZero is the library's test for omitempty.
func isZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return true
		}
		if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
			return z.IsZero()
		}
		return false
	case reflect.Pointer:
		if v.IsNil() {
			return true
		}
	}
	if v.Type().Implements(zeroerType) {
		return v.Interface().(interface{ IsZero() bool }).IsZero()
	}
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0
	case reflect.Pointer:
		return false
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Struct:
		t := v.Type()
		for i := v.NumField() - 1; i >= 0; i-- {
			if t.Field(i).PkgPath != "" {
				continue
			}
			if !isZero(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// crossCheck makes every value the canonical codec writes or reads be
// written or read by the library too, and a difference panic. The tests
// of the packages that write state, and the git-liza that the command
// scripts run, set it (CrossCheckCanon), so that every state file of every
// test is checked both ways.
var crossCheck atomic.Bool

// CrossCheckCanon turns crossCheck on for the process.
func CrossCheckCanon() { crossCheck.Store(true) }

func checkEncode(v any, got []byte) {
	want, err := encodeLibrary(v)
	if err != nil || !bytes.Equal(got, want) {
		panic(fmt.Sprintf("contracts: the canonical YAML of a %T differs from the library's (%v):\n%s\n--- the library's:\n%s", v, err, got, want))
	}
}

func checkDecode(data []byte, v any) {
	lib := reflect.New(reflect.TypeOf(v).Elem())
	err := decode("", data, lib.Interface(), MaxMappingKeys)
	if err != nil || !reflect.DeepEqual(v, lib.Interface()) {
		panic(fmt.Sprintf("contracts: a %T read by the canonical codec differs from the library's reading (%v):\n%s\n--- canonical %#v\n--- library %#v", v, err, data, v, lib.Interface()))
	}
	a, errA := encodeLibrary(v)
	b, errB := encodeLibrary(lib.Interface())
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		panic(fmt.Sprintf("contracts: a %T read by the canonical codec is written back unlike the library's reading:\n%s\n--- library:\n%s", v, a, b))
	}
}
