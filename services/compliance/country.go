package compliance

import "strings"

// countryCodes are the 249 officially assigned ISO 3166-1 alpha-2 codes (user-assigned and
// reserved codes such as XK, UK or EU are not countries here).
const countryCodes = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
	"BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
	"DE DJ DK DM DO DZ " +
	"EC EE EG EH ER ES ET " +
	"FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
	"HK HM HN HR HT HU " +
	"ID IE IL IM IN IO IQ IR IS IT " +
	"JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ " +
	"LA LB LC LI LK LR LS LT LU LV LY " +
	"MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ " +
	"OM " +
	"PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
	"QA " +
	"RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
	"TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ " +
	"VA VC VE VG VI VN VU " +
	"WF WS " +
	"YE YT " +
	"ZA ZM ZW"

// Countries returns the ISO 3166-1 alpha-2 codes a beneficiary's address may name.
func Countries() []string { return strings.Fields(countryCodes) }

// IsCountry reports whether code is an officially assigned ISO 3166-1 alpha-2 code, in
// upper case as the standard writes it.
func IsCountry(code string) bool {
	// Two capital letters are a code of the list exactly when they occur in it: the codes are
	// separated by spaces, so no two letters span two codes.
	return len(code) == 2 && isCapital(code[0]) && isCapital(code[1]) && strings.Contains(countryCodes, code)
}

func isCapital(c byte) bool { return c >= 'A' && c <= 'Z' }
