package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// errHelp says a command's usage was asked for (-h, --help) and printed:
// the process exits 0.
var errHelp = errors.New("help requested")

// parseFlags parses a command's flags, accepted before and after its
// positional arguments alike (every command parses through here). On -h
// or --help it prints usage and the flags to out and returns errHelp; a
// bad flag is an error that carries the usage line.
func parseFlags(fs *flag.FlagSet, args []string, usage string, out io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(reorder(args, fs))
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(out, strings.TrimRight(usage, "\n"))
		fmt.Fprintln(out, "\nflags:")
		fs.SetOutput(out)
		fs.PrintDefaults()
		return errHelp
	}
	if err != nil {
		return fmt.Errorf("%w\n%s", err, strings.TrimRight(usage, "\n"))
	}
	return nil
}

// reorder moves flags before positional arguments so that
// "xp run CONFIG --set k=v" works as well as "xp run --set k=v CONFIG":
// a flag of fs that is not boolean takes the next argument as its value.
func reorder(args []string, fs *flag.FlagSet) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && i+1 < len(args) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				flags = append(flags, args[i+1])
				i++
			}
		}
	}
	return append(flags, pos...)
}
