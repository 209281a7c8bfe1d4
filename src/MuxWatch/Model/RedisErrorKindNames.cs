
namespace MuxWatch.Model;

/// <summary>Text for <see cref="RedisErrorKind"/>.</summary>
public static class RedisErrorKindNames
{
    /// <summary>The kebab-case name used in JSON and docs, e.g. <c>sync-timeout</c>.</summary>
    public static string ToName(this RedisErrorKind kind) => KebabCaseNames<RedisErrorKind>.Of(kind, "unknown");
}
