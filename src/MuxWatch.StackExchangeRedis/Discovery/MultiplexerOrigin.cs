using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// What made a discovered multiplexer, read from the stack of the code that connected it: a known library
/// (named by its package), or the app's own code (the first frame that is neither the runtime's, the
/// client's nor MuxWatch's).
/// </summary>
/// <param name="Label">The short name the multiplexer is watched under (a label value: from a fixed set, or <c>app</c>).</param>
/// <param name="MadeBy">For a person: the library's package, or the app's type and method that connected it; null when unknown.</param>
/// <param name="CallsFrom">
/// The namespace of the library's code that sends the commands, when the library keeps its multiplexer to itself (the
/// distributed cache, SignalR, ...); null when the app sends them (its own multiplexer, or one Aspire made for it).
/// </param>
internal sealed record MultiplexerOrigin(string Label, string? MadeBy, string? CallsFrom = null)
{
    /// <summary>The library's assembly version, for a library.</summary>
    public Version? Version { get; init; }

    /// <summary>Nothing on the stack said: the multiplexer is named <c>redis</c>.</summary>
    public static readonly MultiplexerOrigin Unknown = new("redis", null);

    /// <summary>
    /// The libraries that make a multiplexer of their own (or connect one for the app), by assembly, with the label
    /// they give it and the namespace their commands are sent from (<see cref="CallsFrom"/>).
    /// </summary>
    private static readonly (string Assembly, string Label, string? CallsFrom)[] Libraries =
    [
        ("Microsoft.Extensions.Caching.StackExchangeRedis", "distributed-cache", "Microsoft.Extensions.Caching.StackExchangeRedis"),
        ("Microsoft.AspNetCore.OutputCaching.StackExchangeRedis", "output-cache", "Microsoft.AspNetCore.OutputCaching.StackExchangeRedis"),
        ("Microsoft.AspNetCore.SignalR.StackExchangeRedis", "signalr", "Microsoft.AspNetCore.SignalR.StackExchangeRedis"),
        ("Microsoft.AspNetCore.DataProtection.StackExchangeRedis", "data-protection", "Microsoft.AspNetCore.DataProtection.StackExchangeRedis"),
        ("AspNetCore.HealthChecks.Redis", "health-check", "HealthChecks.Redis"),
        ("Aspire.StackExchange.Redis", "aspire", null), // registers IConnectionMultiplexer: the app sends the commands
    ];

    /// <summary>Assemblies whose frames say nothing of who connected: the runtime, hosting and DI, the client, MuxWatch.</summary>
    private static readonly string[] Plumbing =
    [
        "System.", "Microsoft.", "StackExchange.Redis", "Pipelines.Sockets.Unofficial", "xunit.",
    ];

    /// <summary>MuxWatch's own assemblies (an app's may start with "MuxWatch" too).</summary>
    private static readonly string[] MuxWatchAssemblies = ["MuxWatch", "MuxWatch.StackExchangeRedis", "MuxWatch.AspNetCore", "MuxWatch.Tool"];

    /// <summary>
    /// The origin the current stack shows, or null when it shows only plumbing (a connect's continuation on a
    /// pool thread). Reading a stack costs tens of microseconds: it happens once per connect.
    /// </summary>
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "A frame without its method (trimmed or Native AOT) is skipped; the origin is then unknown.")]
    public static MultiplexerOrigin? FromCaller()
    {
        // The innermost code that is neither plumbing nor the client decides: a library's own call, or the app's
        // (a factory the app registered, even when a library resolved it, is the app's multiplexer, shared).
        foreach (var frame in new StackTrace(skipFrames: 1, fNeedFileInfo: false).GetFrames())
        {
            if (frame.GetMethod() is not { DeclaringType: { } type } method)
            {
                continue;
            }

            var assembly = type.Assembly.GetName().Name ?? string.Empty;
            foreach (var (library, label, callsFrom) in Libraries)
            {
                if (string.Equals(assembly, library, StringComparison.Ordinal))
                {
                    return new MultiplexerOrigin(label, library, callsFrom) { Version = type.Assembly.GetName().Version };
                }
            }

            if (!IsPlumbing(assembly))
            {
                // An async method runs as MoveNext of a state machine named after it (<Load>d__3); a lambda runs as a
                // method named after its own (<Load>b__0), of a closure class (<>c__DisplayClass0_0) or not.
                var stateMachine = Readable(type.Name);
                var name = stateMachine != type.Name ? stateMachine : Readable(method.Name);
                return new MultiplexerOrigin("app", $"{Outer(type).FullName}.{name}");
            }
        }

        return null;
    }

    private static bool IsPlumbing(string assembly)
    {
        if (assembly is "System" or "mscorlib" or "netstandard" || MuxWatchAssemblies.Contains(assembly))
        {
            return true;
        }

        foreach (var prefix in Plumbing)
        {
            if (assembly.StartsWith(prefix, StringComparison.Ordinal) || assembly == prefix)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>The type a compiler-made one (a lambda's closure, an async state machine) belongs to.</summary>
    private static Type Outer(Type type)
    {
        while (type.DeclaringType is { } outer && type.Name.Contains('<', StringComparison.Ordinal))
        {
            type = outer;
        }

        return type;
    }

    /// <summary>The method a compiler-made name stands for (<c>&lt;GetCart&gt;d__3</c> is <c>GetCart</c>).</summary>
    internal static string Readable(string name) =>
        name.StartsWith('<') && name.IndexOf('>', StringComparison.Ordinal) is > 1 and var end ? name[1..end] : name;
}
