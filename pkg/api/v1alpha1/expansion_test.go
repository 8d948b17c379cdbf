package v1alpha1

import (
	"strings"
	"testing"
)

// TestAliasExpansionBoundsText repeats one 1 MiB string by alias: a few
// values, but 100 MiB for whatever writes them out (create's manifest).
func TestAliasExpansionBoundsText(t *testing.T) {
	doc := costHead + "        blob: &b " + strings.Repeat("x", 1<<20) + "\n        copies: [" + strings.Repeat("*b, ", 99) + "*b]\n"
	_, fs, err := ParseDistro("x.yaml", []byte(doc))
	if err == nil {
		t.Fatal("a string repeated to 100 MiB by aliases loaded")
	}
	if want := "x.yaml:1:1: aliases expand the document to more than 1048576 values or 16 MiB of text"; fs.String() != want {
		t.Fatalf("got %s, want %s", fs, want)
	}
	few := costHead + "        blob: &b " + strings.Repeat("x", 1<<20) + "\n        copies: [*b, *b, *b]\n"
	if _, fs, err := ParseDistro("x.yaml", []byte(few)); err != nil {
		t.Fatalf("a string used four times was refused: %s", fs)
	}
}
