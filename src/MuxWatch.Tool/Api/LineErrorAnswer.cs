namespace MuxWatch.Tool.Api;

/// <summary>A line of a POST that could not be used; the others are still recorded.</summary>
/// <param name="Line">Its number, from 1.</param>
/// <param name="Error">Why.</param>
internal sealed record LineErrorAnswer(int Line, string Error);
