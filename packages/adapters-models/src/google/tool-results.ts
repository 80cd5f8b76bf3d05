import type { LanguageModelV3CallOptions, LanguageModelV3Prompt } from '@ai-sdk/provider';

/**
 * The call options with consecutive `tool` messages joined into one. Our conversation carries
 * one tool message per result, and `@ai-sdk/google` makes a content of each; Gemini wants the
 * responses to one turn's (parallel) function calls in the one content after it, and refuses
 * anything else with 400 "Please ensure that the number of function response parts is equal to
 * the number of function call parts of the function call turn."
 */
export function joinToolResults(call: LanguageModelV3CallOptions): LanguageModelV3CallOptions {
  const prompt: LanguageModelV3Prompt = [];
  for (const message of call.prompt) {
    const last = prompt[prompt.length - 1];
    if (message.role === 'tool' && last?.role === 'tool') prompt[prompt.length - 1] = { ...last, content: [...last.content, ...message.content] };
    else prompt.push(message);
  }
  return { ...call, prompt };
}
