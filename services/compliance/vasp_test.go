package compliance_test

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/zcustody/suite/platform/apperr"
	"github.com/zcustody/suite/services/compliance"
)

func TestParseValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    bool
		wantErr bool
	}{
		{give: "true", want: true},
		{give: "false", want: false},
		{give: "True", wantErr: true},
		{give: "FALSE", wantErr: true},
		{give: "1", wantErr: true},
		{give: "0", wantErr: true},
		{give: "yes", wantErr: true},
		{give: "", wantErr: true},
		{give: " true", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			got, err := compliance.ParseValid(tt.give)
			if !tt.wantErr {
				if err != nil || got != tt.want {
					t.Errorf("ParseValid(%q) = %v, %v; want %v", tt.give, got, err, tt.want)
				}
				return
			}
			var e *apperr.Error
			if !errors.As(err, &e) || e.Status != codes.InvalidArgument || e.Code != apperr.CodeFormat || e.Field != "valid" {
				t.Errorf("ParseValid(%q) error = %v, want 400 ER-108 on field valid", tt.give, err)
			}
		})
	}
}

func TestVisibleTo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		give        compliance.VASP
		giveCompany string
		want        bool
	}{
		{name: "unrestricted", give: compliance.VASP{ID: "V1", Active: true}, giveCompany: "ZTEST", want: true},
		{name: "inactive VASP is visible; activation is checked apart", give: compliance.VASP{ID: "V1"}, giveCompany: "ZTEST", want: true},
		{name: "restricted to the company", give: compliance.VASP{ID: "V2", RestrictedCompanies: []string{"ZOTHER", "ZTEST"}}, giveCompany: "ZTEST", want: true},
		{name: "restricted to others", give: compliance.VASP{ID: "V3", RestrictedCompanies: []string{"ZOTHER"}}, giveCompany: "ZTEST", want: false},
		{name: "company ids are case-sensitive", give: compliance.VASP{ID: "V4", RestrictedCompanies: []string{"ztest"}}, giveCompany: "ZTEST", want: false},
		{name: "empty company on a restricted VASP", give: compliance.VASP{ID: "V5", RestrictedCompanies: []string{"ZTEST"}}, giveCompany: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.give.VisibleTo(tt.giveCompany); got != tt.want {
				t.Errorf("VisibleTo(%q) = %v, want %v", tt.giveCompany, got, tt.want)
			}
		})
	}
}

func TestActiveFor(t *testing.T) {
	t.Parallel()
	on, off := &compliance.Activation{Active: true}, &compliance.Activation{Active: false}
	tests := []struct {
		name string
		vasp compliance.VASP
		act  *compliance.Activation
		want bool
	}{
		{"never chosen: active by default", compliance.VASP{Active: true}, nil, true},
		{"company activated", compliance.VASP{Active: true}, on, true},
		{"company deactivated", compliance.VASP{Active: true}, off, false},
		{"operator off, never chosen", compliance.VASP{Active: false}, nil, false},
		{"operator off wins over the company", compliance.VASP{Active: false}, on, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.vasp.ActiveFor(tt.act); got != tt.want {
				t.Errorf("ActiveFor() = %v, want %v", got, tt.want)
			}
		})
	}
}
