package servicedesk

// SignaturePlaceholder is what GetPendingRequest returns in place of a signature.
const SignaturePlaceholder = "$$REPLACE$$"

// Decision types a signed request object carries.
const (
	TypeConfirm = "Confirm"
	TypeApprove = "Approve"
	TypeReject  = "Reject"
)
