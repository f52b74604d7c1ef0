package contracts

import "fmt"

// Code is an exit code of the Liza taxonomy (seed 003).
type Code int

// The exit codes every git-liza command uses.
const (
	CodeOK           Code = 0 // success
	CodeInvalid      Code = 1 // validation or precondition failed
	CodeContention   Code = 2 // retry budget spent
	CodeGit          Code = 3 // git operation failed
	CodeInconsistent Code = 4 // the state at the ref is invalid
	CodeMissingDep   Code = 5 // git absent or too old
)

// Error is an error that carries its exit code. Its message is one line meant
// for a person.
type Error struct {
	Code Code
	Msg  string
	// Err is the error this one reports, when it reports another: errors.Is
	// and errors.As see through to it.
	Err error
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with the given code.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Invalidf builds a validation or precondition error (exit 1).
func Invalidf(format string, args ...any) *Error {
	return Errorf(CodeInvalid, format, args...)
}
