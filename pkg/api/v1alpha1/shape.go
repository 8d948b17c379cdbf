package v1alpha1

import (
	"errors"
	"fmt"
	"io"

	"github.com/goccy/go-yaml/scanner"
	"github.com/goccy/go-yaml/token"
)

// Shape limits: the size bound alone does not bound what parsing costs.
// goccy/go-yaml's lexer and parser keep several hundred bytes per token (an
// 8 MiB list: gigabytes), and the parser takes time quadratic in the keys
// of one block mapping (400k keys: minutes). A real inventory of 1000
// hosts is about 32k tokens in mappings of tens of keys; docs/validate.md
// lists the limits.
const (
	maxTokens      = 200_000
	maxMappingKeys = 2_000
	maxAliases     = 10_000
)

// shapeLimits are the limits one document is checked against.
type shapeLimits struct {
	tokens, keys, aliases int
}

var documentLimits = shapeLimits{tokens: maxTokens, keys: maxMappingKeys, aliases: maxAliases}

// scanShape tokenizes data as the parser's own lexer does, then counts what
// makes the parse expensive: keys per mapping and aliases. checkTokenBound
// has bounded what the lexing costs. It returns the tokens for
// parser.Parse (the document is lexed once), or a finding at the first
// limit passed.
func scanShape(file string, data []byte, lim shapeLimits) (token.Tokens, *Finding) {
	var s scanner.Scanner
	s.Init(string(data))
	var tokens token.Tokens
	c := shapeCounter{file: file, lim: lim}
	for {
		// As lexer.Tokenize: a scan error leaves an invalid token, which
		// the parser reports with its position.
		sub, err := s.Scan()
		if errors.Is(err, io.EOF) {
			break
		}
		tokens.Add(sub...)
	}
	for _, tk := range tokens {
		if f := c.see(tk); f != nil {
			return nil, f
		}
	}
	return tokens, nil
}

// keyRun is an open mapping: block mappings by the column their keys
// start at, flow mappings by their brace.
type keyRun struct {
	col, keys  int
	line, from int // where the first key is
}

// flowRun is an open flow collection; a mapping counts its entries, with
// or without a ":" ({a, b: 1} is two keys).
type flowRun struct {
	mapping *keyRun // nil for a flow sequence
	expect  bool    // the next token starts an entry
}

// shapeCounter follows the block and flow structure well enough to count
// the keys of each mapping as the parser groups them.
type shapeCounter struct {
	file    string
	lim     shapeLimits
	aliases int
	block   []keyRun
	flow    []flowRun
}

func (c *shapeCounter) see(tk *token.Token) *Finding {
	switch tk.Type {
	case token.CommentType:
		return nil
	case token.DocumentHeaderType, token.DocumentEndType:
		c.block, c.flow = c.block[:0], c.flow[:0]
		return nil
	case token.AliasType:
		c.aliases++
		if c.aliases > c.lim.aliases {
			if c.lim.aliases == 0 {
				return c.finding(tk.Position, "holds an alias (*name); this document is written without them")
			}
			return c.finding(tk.Position, fmt.Sprintf("holds more than %d aliases (*name)", c.lim.aliases))
		}
	}
	if len(c.flow) > 0 {
		return c.seeFlow(tk)
	}
	switch tk.Type {
	case token.MappingStartType:
		c.flow = append(c.flow, flowRun{mapping: &keyRun{line: tk.Position.Line, from: tk.Position.Column}, expect: true})
		return nil
	case token.SequenceStartType:
		c.flow = append(c.flow, flowRun{})
		return nil
	}
	if isBlockScalarContent(tk) {
		return nil // its position is not where it is indented
	}
	c.popRight(tk.Position.Column)
	switch tk.Type {
	case token.MappingKeyType: // "? key": its ":" is counted apart, only ever twice
		return c.blockKey(tk.Position)
	case token.MappingValueType:
		if k := keyStart(tk); k != nil {
			c.popRight(k.Position.Column)
			return c.blockKey(k.Position)
		}
	}
	return nil
}

// seeFlow follows a token inside brackets: the first token after "{" or
// "," starts an entry of the mapping (a pair in a flow sequence is a
// mapping of one key).
func (c *shapeCounter) seeFlow(tk *token.Token) *Finding {
	top := &c.flow[len(c.flow)-1]
	switch tk.Type {
	case token.MappingEndType, token.SequenceEndType:
		c.flow = c.flow[:len(c.flow)-1]
		return nil
	case token.CollectEntryType:
		top.expect = true
		return nil
	}
	var f *Finding
	if top.expect && top.mapping != nil {
		f = c.addKey(top.mapping, tk.Position)
	}
	top.expect = false
	switch tk.Type {
	case token.MappingStartType:
		c.flow = append(c.flow, flowRun{mapping: &keyRun{line: tk.Position.Line, from: tk.Position.Column}, expect: true})
	case token.SequenceStartType:
		c.flow = append(c.flow, flowRun{})
	}
	return f
}

// blockKey counts a key of the block mapping whose keys start at pos's
// column, opening that mapping if it is new.
func (c *shapeCounter) blockKey(pos *token.Position) *Finding {
	if n := len(c.block); n > 0 && c.block[n-1].col == pos.Column {
		return c.addKey(&c.block[n-1], pos)
	}
	c.block = append(c.block, keyRun{col: pos.Column})
	return c.addKey(&c.block[len(c.block)-1], pos)
}

func (c *shapeCounter) addKey(m *keyRun, pos *token.Position) *Finding {
	m.keys++
	if m.line == 0 { // a flow mapping starts at its brace
		m.line, m.from = pos.Line, pos.Column
	}
	if m.keys > c.lim.keys {
		return &Finding{Severity: SeverityError, File: c.file, Line: m.line, Column: m.from,
			Message: fmt.Sprintf("the mapping that starts here holds more than %d keys (key %d is on line %d)", c.lim.keys, m.keys, pos.Line)}
	}
	return nil
}

// popRight closes the block mappings indented deeper than col: a token
// there ends them, as it ends the parser's loop over their keys.
func (c *shapeCounter) popRight(col int) {
	for len(c.block) > 0 && c.block[len(c.block)-1].col > col {
		c.block = c.block[:len(c.block)-1]
	}
}

func (c *shapeCounter) finding(pos *token.Position, msg string) *Finding {
	return &Finding{Severity: SeverityError, File: c.file, Line: pos.Line, Column: pos.Column, Message: msg}
}

// keyStart is the first token of the key a ":" follows: the key itself, or
// an anchor (&name) or tag before it on its line, where the parser lines
// keys up.
func keyStart(colon *token.Token) *token.Token {
	k := colon.Prev
	if k == nil {
		return nil
	}
	for {
		p := k.Prev
		switch {
		case p == nil || p.Position.Line != k.Position.Line:
			return k
		case p.Type == token.TagType:
			k = p
		case p.Prev != nil && p.Prev.Type == token.AnchorType && p.Prev.Position.Line == k.Position.Line:
			k = p.Prev // "&" then its name, then the key
		default:
			return k
		}
	}
}

// isBlockScalarContent reports the text of a "|" or ">" scalar, which the
// lexer places at column 0.
func isBlockScalarContent(tk *token.Token) bool {
	p := tk.Prev
	return p != nil && (p.Type == token.LiteralType || p.Type == token.FoldedType) && tk.Type != token.LiteralType && tk.Type != token.FoldedType
}
