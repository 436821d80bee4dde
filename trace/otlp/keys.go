package otlp

// Attribute names the conversion reads. The GenAI conventions are still at
// Development status and keep renaming things, so the names live here, in
// one place, rather than in a library that may lag behind.
const (
	// Weave's own keys.
	keyWandbEntity      = "wandb.entity"
	keyWandbProject     = "wandb.project"
	keyWandbDisplayName = "wandb.display_name"
	keyWandbThreadID    = "wandb.thread_id"
	keyWandbIsTurn      = "wandb.is_turn"

	// GenAI semantic conventions.
	keyGenAIOperation          = "gen_ai.operation.name"
	keyGenAIProvider           = "gen_ai.provider.name"
	keyGenAISystem             = "gen_ai.system"
	keyGenAIRequestModel       = "gen_ai.request.model"
	keyGenAIResponseModel      = "gen_ai.response.model"
	keyGenAIInputMessages      = "gen_ai.input.messages"
	keyGenAIOutputMessages     = "gen_ai.output.messages"
	keyGenAISystemInstructions = "gen_ai.system_instructions"
	keyGenAIToolDefinitions    = "gen_ai.tool.definitions"
	keyGenAIToolName           = "gen_ai.tool.name"
	keyGenAIToolCallArguments  = "gen_ai.tool.call.arguments"
	keyGenAIToolCallResult     = "gen_ai.tool.call.result"
	keyGenAIConversationID     = "gen_ai.conversation.id"
	keyGenAIAgentName          = "gen_ai.agent.name"
	keyGenAIRequestPrefix      = "gen_ai.request."
	keyGenAIPromptPrefix       = "gen_ai.prompt."     // OpenLLMetry: gen_ai.prompt.N.role/content
	keyGenAICompletionPrefix   = "gen_ai.completion." // OpenLLMetry: gen_ai.completion.N.*
	keyErrorType               = "error.type"

	// OpenInference.
	keyOISpanKind          = "openinference.span.kind"
	keyOIInputValue        = "input.value"
	keyOIInputMimeType     = "input.mime_type"
	keyOIOutputValue       = "output.value"
	keyOIOutputMimeType    = "output.mime_type"
	keyOIModelName         = "llm.model_name"
	keyOIProvider          = "llm.provider"
	keyOISystem            = "llm.system"
	keyOIInvocationParams  = "llm.invocation_parameters"
	keyOIInputMessagesPfx  = "llm.input_messages."
	keyOIOutputMessagesPfx = "llm.output_messages."
	keyOISessionID         = "session.id"
	keyOIFinishReason      = "llm.finish_reason"

	// OpenLLMetry (Traceloop).
	keyTraceloopSpanKind     = "traceloop.span.kind"
	keyTraceloopEntityName   = "traceloop.entity.name"
	keyTraceloopEntityInput  = "traceloop.entity.input"
	keyTraceloopEntityOutput = "traceloop.entity.output"
	keyTraceloopSessionID    = "traceloop.association.properties.session_id"
	keyLLMRequestType        = "llm.request.type"

	// Vercel AI SDK.
	keyAIOperationID    = "ai.operationId"
	keyAIPrompt         = "ai.prompt"
	keyAIPromptMessages = "ai.prompt.messages"
	keyAIPromptTools    = "ai.prompt.tools"
	keyAIResponseText   = "ai.response.text"
	keyAIResponseTools  = "ai.response.toolCalls"
	keyAIResponseObject = "ai.response.object"
	keyAIResponseModel  = "ai.response.model"
	keyAIResponseFinish = "ai.response.finishReason"
	keyAIResultText     = "ai.result.text"
	keyAIResultTools    = "ai.result.toolCalls"
	keyAIResultObject   = "ai.result.object"
	keyAIToolCallName   = "ai.toolCall.name"
	keyAIToolCallArgs   = "ai.toolCall.args"
	keyAIToolCallInput  = "ai.toolCall.input"
	keyAIToolCallResult = "ai.toolCall.result"
	keyAIToolCallOutput = "ai.toolCall.output"
	keyAIModelID        = "ai.model.id"
	keyAIModelProvider  = "ai.model.provider"
	keyAIFunctionID     = "ai.telemetry.functionId"
	keyAISessionID      = "ai.telemetry.metadata.sessionId"
	keyAISettingsPrefix = "ai.settings."

	// pydantic-ai and Logfire.
	keyLogfireMsg        = "logfire.msg"
	keyLogfireSpanType   = "logfire.span_type"
	keyPydanticMessages  = "pydantic_ai.all_messages"
	keyPydanticFinal     = "final_result"
	keyLogfireEvents     = "events"
	keyLogfireAllEvents  = "all_messages_events"
	keyMLflowSpanInputs  = "mlflow.spanInputs"
	keyMLflowSpanOutputs = "mlflow.spanOutputs"
)

// Span events of the older GenAI conventions (also Logfire's "events").
const (
	eventException        = "exception"
	eventGenAIChoice      = "gen_ai.choice"
	eventGenAIMessageSufx = ".message" // gen_ai.{system,user,assistant,tool}.message
	eventGenAIPrefix      = "gen_ai."
)

// Token counters, first key present wins. Each list names one counter in
// every convention.
var (
	promptTokenKeys = []string{"gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
		"ai.usage.inputTokens", "ai.usage.promptTokens"}
	completionTokenKeys = []string{"gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion",
		"ai.usage.outputTokens", "ai.usage.completionTokens"}
	totalTokenKeys     = []string{"gen_ai.usage.total_tokens", "llm.usage.total_tokens", "llm.token_count.total", "ai.usage.totalTokens"}
	cacheReadTokenKeys = []string{"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
		"llm.token_count.prompt_details.cache_read", "ai.usage.cachedInputTokens", "ai.usage.inputTokenDetails.cacheReadTokens"}
	cacheCreationTokenKeys = []string{"gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens",
		"llm.token_count.prompt_details.cache_write", "ai.usage.inputTokenDetails.cacheWriteTokens"}
	reasoningTokenKeys = []string{"gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning",
		"ai.usage.reasoningTokens", "ai.usage.outputTokenDetails.reasoningTokens"}
)

// Other first-present lists.
var (
	modelKeys    = []string{keyGenAIResponseModel, keyAIResponseModel, keyGenAIRequestModel, keyOIModelName, keyAIModelID}
	providerKeys = []string{keyGenAIProvider, keyGenAISystem, keyOIProvider, keyOISystem, keyAIModelProvider}
	kindKeys     = []string{keyOISpanKind, keyTraceloopSpanKind, keyGenAIOperation, keyLLMRequestType, keyAIOperationID}
	// Tool names come before the AI SDK's function id, which every span of
	// a call repeats.
	displayNameKeys = []string{keyWandbDisplayName, keyLogfireMsg, keyGenAIToolName, keyAIToolCallName, keyAIFunctionID,
		keyGenAIAgentName, keyTraceloopEntityName}
	threadKeys = []string{keyWandbThreadID, keyGenAIConversationID, keyOISessionID, keyTraceloopSessionID, keyAISessionID}
)
