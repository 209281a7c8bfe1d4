namespace MuxWatch.StackExchangeRedis;

/// <summary>A reply over its <see cref="ReplyLimits"/>: the poll fails as <c>oversized</c>.</summary>
internal sealed class OversizedReplyException(string command, long size, long limit) : Exception($"{command} reply of {size} over {limit}")
{
    /// <summary>The command whose reply it was.</summary>
    public string Command { get; } = command;

    /// <summary>Its size (characters, or entries for an array).</summary>
    public long Size { get; } = size;

    /// <summary>The limit it went over.</summary>
    public long Limit { get; } = limit;
}
