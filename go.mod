module github.com/xp-nlp/xp

go 1.23

require (
	github.com/schollz/progressbar/v3 v3.14.6
	github.com/sugarme/gotch v0.9.1
	golang.org/x/term v0.22.0
)

require (
	github.com/go-gota/gota v0.12.0 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	golang.org/x/sys v0.22.0 // indirect
	gonum.org/v1/gonum v0.15.1 // indirect
)
