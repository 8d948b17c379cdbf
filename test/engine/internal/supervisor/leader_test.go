package supervisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every server applies choose to what it sees; these are the cases the
// walks go through.
func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		what, self, cur string
		views           map[string]View
		want            string
	}{
		{"a lone founder leads itself", "s1", "", nil, "s1"},
		{"a joining server follows the leader", "s2", "", map[string]View{"s1": {Name: "s1", Leader: "s1", Ready: true}}, "s1"},
		{"a leader stays the leader", "s2", "s2", map[string]View{"s3": {Name: "s3", Leader: "s2", Ready: true}}, "s2"},
		{"the founder back follows the leader it finds", "s1", "",
			map[string]View{"s2": {Name: "s2", Leader: "s2", Ready: true}, "s3": {Name: "s3", Leader: "s2", Ready: true}}, "s2"},
		{"the leader gone, the smallest ready server takes it", "s3", "s1",
			map[string]View{"s2": {Name: "s2", Leader: "s1", Ready: true}}, "s2"},
		{"so does the smallest itself", "s2", "s1",
			map[string]View{"s3": {Name: "s3", Leader: "s1", Ready: true}}, "s2"},
		{"a server not caught up does not take it", "s3", "",
			map[string]View{"s2": {Name: "s2", Ready: false}}, "s3"},
		{"of two leaders the smaller keeps it", "s2", "s2", map[string]View{"s1": {Name: "s1", Leader: "s1", Ready: true}}, "s1"},
		{"and the larger one's claim is ignored", "s1", "s1", map[string]View{"s2": {Name: "s2", Leader: "s2", Ready: true}}, "s1"},
	} {
		assert.Equal(t, tc.want, choose(tc.self, tc.cur, tc.views), tc.what)
	}
}
