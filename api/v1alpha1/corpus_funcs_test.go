package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMilvusNames(t *testing.T) {
	c := &Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "hand.book"}}
	if got := c.MilvusAlias(); got != "team_a_hand_book" {
		t.Errorf("MilvusAlias() = %q", got)
	}
	if got := c.MilvusCollection("bd6a98db3707e3ef"); got != "team_a_hand_book_bd6a98db3707e3ef" {
		t.Errorf("MilvusCollection() = %q", got)
	}
	c.Namespace = "1st"
	if got := c.MilvusAlias(); got != "_1st_hand_book" {
		t.Errorf("a name starting with a digit: %q", got)
	}
	if c.UsesMilvus() || c.GetDeletionPolicy() != DeletionDelete {
		t.Errorf("defaults: UsesMilvus %v, deletion policy %s", c.UsesMilvus(), c.GetDeletionPolicy())
	}
}
