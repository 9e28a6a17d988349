/** The embedding model of scripted and Bedrock chatbots, and its size (knowledge/embeddings.ts says why). */
export const TITAN_V2 = "amazon.titan-embed-text-v2:0";
/** 256 of Titan V2's 1024 / 512 / 256: AWS reports ≈ 97 % of the 1024-dimension retrieval accuracy, at a quarter of the memory and time. */
export const TITAN_DIMENSIONS = 256;
