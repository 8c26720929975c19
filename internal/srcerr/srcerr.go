// Package srcerr owns errors that point into an input file: the file name
// and, where known, the line, in the "file:line: message" form that editors
// and terminals make clickable. Every loader of user-supplied bytes in xp
// (datasets, embeddings, configs) reports bad input through it.
package srcerr

import (
	"errors"
	"fmt"
)

// Error is a problem at a place in an input file. Line is 1-based; 0 means
// the problem concerns the whole file (an empty file, a missing header).
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// At returns an *Error for file and line with a formatted message. Use %w
// in format to keep a cause inspectable with errors.Is and errors.As.
func At(file string, line int, format string, args ...any) error {
	return &Error{File: file, Line: line, Err: fmt.Errorf(format, args...)}
}

// Wrap places err at file:line unless it already carries a position, in
// which case it is returned unchanged (the innermost position wins).
func Wrap(file string, line int, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{File: file, Line: line, Err: err}
}
