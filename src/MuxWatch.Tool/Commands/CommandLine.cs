using System.CommandLine;
using System.CommandLine.Help;
using System.Reflection;

namespace MuxWatch.Tool.Commands;

/// <summary>
/// The <c>muxwatch</c> command line, parsed by System.CommandLine as <c>dotnet-counters</c> and <c>dotnet-trace</c>
/// parse theirs: help per command, a suggestion for a typo, <c>--version</c>, response files (<c>@file</c>), and
/// the exit codes below kept.
/// </summary>
internal static class CommandLine
{
    /// <summary>Exit code: the command did what was asked (a message was read and explained, help shown).</summary>
    public const int Read = 0;

    /// <summary>Exit code: there was nothing to read (empty input, a file that cannot be read).</summary>
    public const int NothingToRead = 1;

    /// <summary>Exit code: the command line was wrong (an unknown command or option).</summary>
    public const int BadUsage = 2;

    /// <summary>The informational version (0.1.0, or 0.1.0-rc.1+commit).</summary>
    public static string Version { get; } =
        typeof(CommandLine).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? "unknown";

    private const string Description = """
        muxwatch: explains StackExchange.Redis timeouts, and runs the MuxWatch sidecar.

          muxwatch explain [--jsonl] [FILE]   explain a timeout message read from FILE or standard input
          muxwatch doctor CONNECTION [--json] read one Redis server once and say what stalls its clients
          muxwatch serve [SETTINGS]           run the sidecar (default http://localhost:9401: /metrics, /api/...)
          muxwatch [SETTINGS]                 the same (as the container and `dotnet run` start it)

        SETTINGS: --urls URL (also ASPNETCORE_URLS), and any setting as --Section:Key=value
          (--MuxWatch:Targets:0:Name=cache --MuxWatch:Targets:0:ConnectionString=redis:6379),
          or MuxWatch__Section__Key in the environment.
        Exit codes: 0 read, 1 nothing to read (empty input, unreadable file; doctor: no connection), 2 bad usage;
          serve: 0 stopped, 2 configuration or address refused at start (each setting named).
        Documentation: https://github.com/muxwatch/muxwatch
        """;

    /// <summary>
    /// Runs the command <paramref name="args"/> name: <c>explain</c> here, <c>serve</c> (or no command) through
    /// <paramref name="serve"/>, which gets the settings left on the line.
    /// </summary>
    public static async Task<int> RunAsync(string[] args, TextReader input, TextWriter output, TextWriter error, Func<string[], Task<int>> serve)
    {
        var jsonLines = new Option<bool>("--jsonl") { Description = "read JSON lines, each {\"message\": \"...\"}; write one JSON object per line" };
        var file = new Argument<string?>("FILE") { Description = "the file to read (default, or -: standard input)", Arity = ArgumentArity.ZeroOrOne };
        file.Validators.Add(result =>
        {
            if (result.Tokens is [{ Value: var token }] && token.StartsWith('-') && token != "-")
            {
                result.AddError($"Unrecognized option '{token}'.");
            }
        });
        var explain = new Command("explain", "Explain one StackExchange.Redis timeout or connection message read from FILE or standard input.\n"
            + "Exit codes: 0 read, 1 nothing to read (empty input, input in which no Redis message is found, a file that cannot be read), 2 bad usage.")
        {
            jsonLines,
            file,
        };
        explain.SetAction((parsed, _) => ExplainCommand.RunAsync(parsed.GetValue(jsonLines), parsed.GetValue(file), input, output, error));

        var connection = new Argument<string>("CONNECTION") { Description = "a StackExchange.Redis connection string (host:port,ssl=true,user=...); the password from --password-file or " + DoctorCommand.PasswordVariable };
        var passwordFile = new Option<string?>("--password-file") { Description = "a file holding the password (a trailing newline is dropped)" };
        var trustedCaFile = new Option<string?>("--trusted-ca-file") { Description = "a PEM file of the CA (or CAs) that issued the server's certificate" };
        var timeout = new Option<double>("--timeout") { Description = "seconds for the whole examination, connecting included", DefaultValueFactory = _ => 10 };
        timeout.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<double>() is not (> 0 and <= 600))
            {
                result.AddError("--timeout must be between 0 and 600 seconds.");
            }
        });
        var json = new Option<bool>("--json") { Description = "write the findings as one JSON document" };
        var doctor = new Command("doctor", "Connect once to one Redis server, read-only (INFO, CONFIG GET, SLOWLOG, LATENCY LATEST, CLIENT LIST), and say what stalls its clients "
            + "or is about to: role and replication, memory and the next fork's pause, persistence settings, the slow log by client, latency events, clients reading huge replies.\n"
            + "Exit codes: 0 read, 1 no connection, 2 bad usage.")
        {
            connection,
            passwordFile,
            trustedCaFile,
            timeout,
            json,
        };
        doctor.SetAction((parsed, _) => DoctorCommand.RunAsync(parsed.GetValue(connection)!, parsed.GetValue(passwordFile), parsed.GetValue(trustedCaFile),
            TimeSpan.FromSeconds(parsed.GetValue(timeout)), parsed.GetValue(json), output, error));

        var serveCommand = new Command("serve", "Run the sidecar; settings as --Section:Key=value (see muxwatch --help).") { TreatUnmatchedTokensAsErrors = false };
        serveCommand.SetAction((parsed, _) => serve([.. parsed.UnmatchedTokens]));

        // The root is the program as users call it (`muxwatch`, whatever the assembly's name); with no command it
        // serves, so it takes the settings left on the line, unless the first word is a command it does not know.
        var root = new Command("muxwatch", Description) { explain, doctor, serveCommand };
        root.Options.Add(new HelpOption());
        root.Options.Add(new VersionOption());
        root.TreatUnmatchedTokensAsErrors = args is [var first, ..] && !first.StartsWith('-');
        root.SetAction((parsed, _) => serve([.. parsed.UnmatchedTokens]));

        var result = root.Parse(args);
        var exitCode = await result.InvokeAsync(new InvocationConfiguration { Output = output, Error = error }).ConfigureAwait(false);
        return result.Errors.Count > 0 ? BadUsage : exitCode;
    }
}
