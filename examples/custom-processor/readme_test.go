package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
)

// The README's first example, "A pipeline in 20 lines": its main, run.
// TestReadmeExampleIsThisCode checks that the README shows exactly this
// body and the Shout of main.go.
func Example_readme() {
	task := pipeline.NewTask(pipeline.New(Shout{}), pipeline.TaskOptions{})
	pipeline.OnDownstream(task, func(t *frames.Text) {
		fmt.Println(t.Text) // HELLO
	})
	task.QueueFrame(&frames.Text{Text: "hello"})
	task.EndWhenDone() // End goes in after "hello": the task ends once both have gone through
	if err := task.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
	// Output: HELLO
}

// The README's first Go block is Shout as main.go declares it and a main
// whose body is Example_readme's, so the README cannot drift from code
// that compiles and runs.
func TestReadmeExampleIsThisCode(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block, ok := firstGoBlock(string(readme))
	if !ok {
		t.Fatal("README.md has no ```go block")
	}
	fset := token.NewFileSet()
	shown, err := parser.ParseFile(fset, "README.md", "package main\n"+block, 0)
	if err != nil {
		t.Fatalf("README's first example does not parse: %v", err)
	}
	code, err := parser.ParseFile(fset, "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	test, err := parser.ParseFile(fset, "readme_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"type Shout", "func Shout.ProcessFrame"} {
		if diff := cmp.Diff(source(t, fset, decl(code, name)), source(t, fset, decl(shown, name))); diff != "" {
			t.Errorf("README's %s differs from main.go's (-main.go +README):\n%s", name, diff)
		}
	}
	want := source(t, fset, decl(test, "func Example_readme").(*ast.FuncDecl).Body)
	got := source(t, fset, decl(shown, "func main").(*ast.FuncDecl).Body)
	// The body ends differently (Example_readme's Output comment leaves a
	// blank line), so blank lines do not count.
	if diff := cmp.Diff(noBlankLines(want), noBlankLines(got)); diff != "" {
		t.Errorf("README's main differs from Example_readme (-example +README):\n%s", diff)
	}
	if n := len(shown.Decls); n != 3 {
		t.Errorf("README's first example has %d declarations, want Shout, its method and main", n)
	}
}

// firstGoBlock returns the contents of the first ```go fence in md.
func firstGoBlock(md string) (string, bool) {
	_, rest, ok := strings.Cut(md, "```go\n")
	if !ok {
		return "", false
	}
	block, _, ok := strings.Cut(rest, "```")
	return block, ok
}

func noBlankLines(s string) string {
	var kept []string
	for line := range strings.Lines(s) {
		if strings.TrimSpace(line) != "" {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}

// decl finds a declaration by "type Name", "func Name" or "func Recv.Name".
func decl(f *ast.File, name string) ast.Node {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok && "type "+ts.Name.Name == name {
					return ts
				}
			}
		case *ast.FuncDecl:
			n := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				if id, ok := d.Recv.List[0].Type.(*ast.Ident); ok {
					n = id.Name + "." + n
				}
			}
			if "func "+n == name {
				return d
			}
		}
	}
	return nil
}

// source prints n without comments, so only the code is compared. A
// missing declaration prints as "<missing>".
func source(t *testing.T, fset *token.FileSet, n ast.Node) string {
	t.Helper()
	if n == nil {
		return "<missing>"
	}
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
