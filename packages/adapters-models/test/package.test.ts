import { describe, expect, it } from 'vitest';

/**
 * The public surface of @agent-platform/adapters-models: the names each entry exports. A change here is a change of
 * the package's API: review it, then update the snapshot (`vitest run -u`).
 */
describe('@agent-platform/adapters-models exports', () => {
  it('.', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_OLLAMA_HOST",
        "ollamaBaseURL",
        "ollamaChatModel",
        "openaiChatModel",
      ]
    `);
  });
  it('./openai', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models/openai')).sort()).toMatchInlineSnapshot(`
      [
        "namesOf",
        "openaiChatModel",
        "openaiCompatibleModel",
      ]
    `);
  });
  it('./ai-sdk', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models/ai-sdk')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_ANSWER_LIMIT",
        "aiSdkChatModel",
        "describeUpstream",
        "getJson",
        "modelFetch",
      ]
    `);
  });
  it('./anthropic', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models/anthropic')).sort()).toMatchInlineSnapshot(`
      [
        "ANTHROPIC_BASE_URL",
        "anthropicChatModel",
      ]
    `);
  });
  it('./bedrock', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models/bedrock')).sort()).toMatchInlineSnapshot(`
      [
        "bedrockChatModel",
        "bedrockProviderOptions",
      ]
    `);
  });
  it('./ollama', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models/ollama')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_OLLAMA_HOST",
        "ollamaBaseURL",
        "ollamaChatModel",
      ]
    `);
  });
  it('./azure', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models/azure')).sort()).toMatchInlineSnapshot(`
      [
        "AZURE_API_VERSION",
        "azureChatModel",
      ]
    `);
  });
  it('./openai-responses', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models/openai-responses')).sort()).toMatchInlineSnapshot(`
      [
        "OPENAI_BASE_URL",
        "openaiResponsesChatModel",
      ]
    `);
  });
  it('./google', async () => {
    expect(Object.keys(await import('@agent-platform/adapters-models/google')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_GOOGLE_BASE_URL",
        "GOOGLE_CAPABILITIES",
        "googleChatModel",
      ]
    `);
  });
});
