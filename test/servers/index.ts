export * from './common';
export { startAnthropicServer, anthropicToolResults, type ScriptedAnthropicServer } from './anthropic';
export { startOpenAiServer, openAiToolResults, type ScriptedOpenAiServer } from './openai';
