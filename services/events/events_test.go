package events_test

import (
	"testing"

	pevents "github.com/zcustody/suite/platform/events"
	"github.com/zcustody/suite/services/events"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	tok := events.Token("ZTEST", 42)
	if seq, err := events.ParseToken("after", tok, "ZTEST"); err != nil || seq != 42 {
		t.Fatalf("ParseToken(Token(42)) = %d, %v", seq, err)
	}
	if seq, err := events.ParseToken("after", "", "ZTEST"); err != nil || seq != 0 {
		t.Fatalf("an empty token = %d, %v; want 0", seq, err)
	}
	for name, bad := range map[string]string{
		"another company's": events.Token("ZOTHER", 42),
		"garbage":           "abc$",
		"base64 of junk":    "aGVsbG8",
		"a negative seq":    events.Token("ZTEST", -1),
	} {
		if _, err := events.ParseToken("after", bad, "ZTEST"); err == nil {
			t.Errorf("%s token accepted", name)
		}
	}
}

func TestArrangeKeepsEachEntitysVersionOrderInItsSlots(t *testing.T) {
	t.Parallel()
	e := func(id string, v int64) pevents.Event {
		return pevents.Event{Entity: pevents.Entity{Type: "settlement", ID: id, Version: v}}
	}
	got := events.Arrange([]pevents.Event{e("A", 3), e("B", 1), e("A", 1), e("C", 1), e("A", 2), e("B", 2)})
	want := []pevents.Event{e("A", 1), e("B", 1), e("A", 2), e("C", 1), e("A", 3), e("B", 2)}
	for i := range want {
		if got[i].Entity != want[i].Entity {
			t.Fatalf("Arrange = %v, want %v", got, want)
		}
	}
}
