namespace MuxWatch.Json;

/// <summary>A line that could not be used (<c>explain --jsonl</c>): <c>{"error": "..."}</c>.</summary>
/// <param name="Error">Why, in words.</param>
public sealed record ErrorAnswer(string Error);
