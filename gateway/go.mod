module github.com/zcustody/suite/gateway

go 1.26.7

replace (
	github.com/zcustody/suite/proto => ../proto
	github.com/zcustody/suite/services => ../services
)
