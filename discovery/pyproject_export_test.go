package discovery

// IsPyprojectVersion is the version format check, for the test that holds
// it to its regular expression.
var IsPyprojectVersion = isPyprojectVersion
