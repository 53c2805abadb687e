package stack

// bucketPolicy adds id, the policy of the stack's bucket named bucketID
// (created on cond, if set): TLS only, every request made over plain HTTP
// denied whoever makes it (aws:SecureTransport), then statements.
func bucketPolicy(t *Template, id, bucketID, cond string, statements ...any) {
	tlsOnly := map[string]any{
		"Sid": "TLSOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
		"Resource":  []any{GetAtt(bucketID, "Arn"), Sub("${" + bucketID + ".Arn}/*")},
		"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
	}
	t.add(id, Resource{Type: "AWS::S3::BucketPolicy", Condition: cond, Properties: map[string]any{
		"Bucket":         Ref(bucketID),
		"PolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": append([]any{tlsOnly}, statements...)},
	}})
}
