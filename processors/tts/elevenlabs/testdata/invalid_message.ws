# An error message, then the close that follows it.
< init
< text
> {"message":"Could not parse input message, make sure it is a json and follows the schema outlined in protocol.","error":"invalid_input_message","code":1008}
close 1008 Could not parse input message.
