module github.com/xp-nlp/xp

go 1.23

require github.com/sugarme/gotch v0.9.1
