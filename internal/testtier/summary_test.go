package testtier

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stream as `go test -json` writes it: a passing package with one skip,
// a failing package, a package with no test files.
const stream = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestPass"}
{"Action":"output","Package":"ex/a","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Action":"output","Package":"ex/a","Test":"TestPass","Output":"--- PASS: TestPass (0.00s)\n"}
{"Action":"pass","Package":"ex/a","Test":"TestPass","Elapsed":0}
{"Action":"run","Package":"ex/a","Test":"TestGated"}
{"Action":"output","Package":"ex/a","Test":"TestGated","Output":"=== RUN   TestGated\n"}
{"Action":"output","Package":"ex/a","Test":"TestGated","Output":"    a_test.go:9: slow tier: builds things; run it with ` + "`CARGOSHIP_TEST_SLOW=1 go test ./a/`" + `\n"}
{"Action":"output","Package":"ex/a","Test":"TestGated","Output":"--- SKIP: TestGated (0.00s)\n"}
{"Action":"skip","Package":"ex/a","Test":"TestGated","Elapsed":0}
{"Action":"output","Package":"ex/a","Output":"PASS\n"}
{"Action":"output","Package":"ex/a","Output":"ok  \tex/a\t0.01s\n"}
{"Action":"pass","Package":"ex/a","Elapsed":0.01}
{"Action":"run","Package":"ex/b","Test":"TestBroken"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"    b_test.go:5: want 1, got 2\n"}
{"Action":"output","Package":"ex/b","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}
{"Action":"fail","Package":"ex/b","Test":"TestBroken","Elapsed":0}
{"Action":"output","Package":"ex/b","Output":"FAIL\tex/b\t0.01s\n"}
{"Action":"fail","Package":"ex/b","Elapsed":0.01}
{"Action":"output","Package":"ex/c","Output":"?   \tex/c\t[no test files]\n"}
{"Action":"skip","Package":"ex/c","Elapsed":0}
`

func TestSummarizeListsSkipsWithTheirReasons(t *testing.T) {
	var out strings.Builder
	c, err := Summarize(strings.NewReader(stream), &out)
	require.NoError(t, err)
	assert.Equal(t, Counts{Passed: 1, Failed: 1, Skipped: 1}, c)
	assert.False(t, c.OK())
	s := out.String()
	assert.Contains(t, s, "ok  \tex/a\t0.01s\n")
	assert.False(t, strings.HasPrefix(s, "PASS") || strings.Contains(s, "\nPASS\n"), "the test binary's PASS is left out, as go test does")
	assert.Contains(t, s, "b_test.go:5: want 1, got 2", "a failed test's output is shown")
	assert.NotContains(t, s, "=== RUN   TestPass", "a passed test's output is not")
	assert.Contains(t, s, "?   \tex/c\t[no test files]\n")
	assert.Contains(t, s, "skipped 1 tests")
	assert.Contains(t, s, "  ex/a TestGated\n      a_test.go:9: slow tier: builds things; run it with `CARGOSHIP_TEST_SLOW=1 go test ./a/`\n")
	assert.True(t, strings.HasSuffix(s, "1 passed, 1 failed, 1 skipped\n"), s)
}

func TestSummarizeCountsBuildFailures(t *testing.T) {
	in := `{"ImportPath":"ex/d [ex/d.test]","Action":"build-output","Output":"d_test.go:3:1: syntax error\n"}
{"ImportPath":"ex/d [ex/d.test]","Action":"build-fail"}
{"Action":"output","Package":"ex/d","Output":"FAIL\tex/d [build failed]\n"}
{"Action":"fail","Package":"ex/d","Elapsed":0}
`
	var out strings.Builder
	c, err := Summarize(strings.NewReader(in), &out)
	require.NoError(t, err)
	assert.Equal(t, 1, c.BuildFailed)
	assert.False(t, c.OK())
	assert.Contains(t, out.String(), "d_test.go:3:1: syntax error")
	assert.Contains(t, out.String(), "1 packages did not build")
}
