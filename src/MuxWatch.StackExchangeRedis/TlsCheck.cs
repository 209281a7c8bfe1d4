using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Validates a TLS target's certificate for a connection MuxWatch makes, trusting the system's roots and,
/// when configured, one CA of the user's (<c>MuxWatch:Targets:N:TrustedCaFile</c>), and keeps why a
/// certificate was refused, so <c>/api/targets</c> and the log can say so instead of a bare failure type.
/// </summary>
/// <remarks>
/// Written here rather than with the client's <c>ConfigurationOptions.TrustIssuer</c>, which installs a
/// callback of its own in place of any other: the reason for a refusal would be lost. The chain is built
/// by .NET's <see cref="X509Chain"/> with the CA as a custom root; nothing about the certificate is
/// secret, and no key or password is ever part of the reason.
/// </remarks>
internal sealed class TlsCheck(X509Certificate2? trustedCa, string trustedCaSetting)
{
    private string? _failure;
    private int _failureIsNew;

    /// <summary>Why the latest certificate was refused, or null when the latest was accepted.</summary>
    public string? LastFailure => Volatile.Read(ref _failure);

    /// <summary>A refusal not yet reported: returned once.</summary>
    public string? TakeNewFailure() => Interlocked.Exchange(ref _failureIsNew, 0) == 1 ? LastFailure : null;

    /// <summary>The client's <c>CertificateValidation</c> callback.</summary>
    public bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        var failure = Reason(certificate, errors);
        Volatile.Write(ref _failure, failure);
        if (failure is not null)
        {
            Interlocked.Exchange(ref _failureIsNew, 1);
        }

        return failure is null;
    }

    private string? Reason(X509Certificate? certificate, SslPolicyErrors errors)
    {
        if (errors == SslPolicyErrors.None)
        {
            return null;
        }

        if (certificate is null || errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable))
        {
            return "TLS: the server presented no certificate";
        }

        var reasons = new List<string>();
        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch))
        {
            reasons.Add("its certificate does not name the host connected to (RemoteCertificateNameMismatch; sslHost= in the connection string sets the name to expect)");
        }

        if (errors.HasFlag(SslPolicyErrors.RemoteCertificateChainErrors) && ChainProblem(certificate) is { } problem)
        {
            reasons.Add(problem);
        }

        return reasons.Count == 0 ? null : "TLS: the server's certificate was refused: " + string.Join("; ", reasons);
    }

    private static string Words(X509ChainStatusFlags status) => status switch
    {
        X509ChainStatusFlags.PartialChain => "signed by a CA not known here: PartialChain",
        X509ChainStatusFlags.UntrustedRoot => "its root CA is not trusted: UntrustedRoot",
        X509ChainStatusFlags.NotTimeValid => "expired or not yet valid: NotTimeValid",
        X509ChainStatusFlags.NotValidForUsage => "not for server authentication: NotValidForUsage",
        _ => status.ToString(),
    };

    /// <summary>Null when the certificate chains to the configured CA; else what is wrong with its chain.</summary>
    private string? ChainProblem(X509Certificate certificate)
    {
        using var presented = new X509Certificate2(certificate);
        using var chain = new X509Chain();
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        if (trustedCa is not null)
        {
            chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
            chain.ChainPolicy.CustomTrustStore.Add(trustedCa);
        }

        if (chain.Build(presented))
        {
            return null;
        }

        var statuses = string.Join(", ", chain.ChainStatus.Select(s => Words(s.Status)).Distinct());
        return trustedCa is null
            ? $"its certificate is not trusted here ({statuses}); set {trustedCaSetting} to the CA that signed it"
            : $"its certificate does not chain to the CA in {trustedCaSetting} ({statuses})";
    }
}
